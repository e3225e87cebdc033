#include "trace/trace-hw_devmemsim.h"
