// SPDX-License-Identifier: GPL-2.0
/*
 * dmsgpu: PCI probe and remove, device identity and resources, sysfs.
 * See dmsgpu.h for the driver's overview.
 */
#include <linux/dma-mapping.h>
#include <linux/genalloc.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include <devmemsim/gpu_regs.h>
#include <devmemsim/pci_ids.h>

#include "dmsgpu.h"

DEFINE_SRCU(dmsgpu_srcu);
static DEFINE_IDA(dmsgpu_ida);

static void dmsgpu_free(struct kref *ref)
{
	struct dmsgpu *gpu = container_of(ref, struct dmsgpu, ref);

	if (gpu->pool)
		gen_pool_destroy(gpu->pool);
	pci_dev_put(gpu->pdev);
	kfree(gpu);
}

void dmsgpu_put(struct dmsgpu *gpu)
{
	kref_put(&gpu->ref, dmsgpu_free);
}

u64 dmsgpu_mem_used(struct dmsgpu *gpu)
{
	return gpu->mem_size - gen_pool_avail(gpu->pool);
}

/* --- sysfs: /sys/class/misc/dmsgpuN/mem_{size,used,free}, buffers ------- */

static struct dmsgpu *dmsgpu_from_dev(struct device *dev)
{
	struct miscdevice *misc = dev_get_drvdata(dev);

	return container_of(misc, struct dmsgpu, misc);
}

static ssize_t mem_size_show(struct device *dev, struct device_attribute *attr,
			     char *page)
{
	return sysfs_emit(page, "%llu\n", dmsgpu_from_dev(dev)->mem_size);
}
static DEVICE_ATTR_RO(mem_size);

static ssize_t mem_used_show(struct device *dev, struct device_attribute *attr,
			     char *page)
{
	return sysfs_emit(page, "%llu\n", dmsgpu_mem_used(dmsgpu_from_dev(dev)));
}
static DEVICE_ATTR_RO(mem_used);

static ssize_t mem_free_show(struct device *dev, struct device_attribute *attr,
			     char *page)
{
	return sysfs_emit(page, "%zu\n", gen_pool_avail(dmsgpu_from_dev(dev)->pool));
}
static DEVICE_ATTR_RO(mem_free);

static ssize_t buffers_show(struct device *dev, struct device_attribute *attr,
			    char *page)
{
	return sysfs_emit(page, "%d\n", atomic_read(&dmsgpu_from_dev(dev)->nr_bufs));
}
static DEVICE_ATTR_RO(buffers);

static struct attribute *dmsgpu_attrs[] = {
	&dev_attr_mem_size.attr,
	&dev_attr_mem_used.attr,
	&dev_attr_mem_free.attr,
	&dev_attr_buffers.attr,
	NULL
};
ATTRIBUTE_GROUPS(dmsgpu);

/* --- PCI driver -------------------------------------------------------- */

static void dmsgpu_put_action(void *gpu)
{
	dmsgpu_put(gpu);
}

static void dmsgpu_ida_free(void *gpu)
{
	ida_free(&dmsgpu_ida, ((struct dmsgpu *)gpu)->id);
}

/* Map BAR0 and check that this is a device the driver knows. */
static int dmsgpu_map_regs(struct dmsgpu *gpu)
{
	struct pci_dev *pdev = gpu->pdev;
	struct device *dev = &pdev->dev;
	u32 magic;
	int err;

	err = pcim_enable_device(pdev);
	if (err)
		return dev_err_probe(dev, err, "cannot enable device\n");
	gpu->regs = pcim_iomap_region(pdev, DMS_GPU_BAR_REGS, "dmsgpu");
	if (IS_ERR(gpu->regs))
		return dev_err_probe(dev, PTR_ERR(gpu->regs),
				     "cannot map BAR%d\n", DMS_GPU_BAR_REGS);

	magic = readl(gpu->regs + DMS_GPU_REG_ID);
	if (magic != DMS_GPU_ID_MAGIC)
		return dev_err_probe(dev, -ENODEV,
				     "bad identity 0x%08x (want 0x%08x)\n",
				     magic, DMS_GPU_ID_MAGIC);
	gpu->hw_version = readl(gpu->regs + DMS_GPU_REG_VERSION);
	if (gpu->hw_version >> 16 != DMS_GPU_VERSION >> 16 ||
	    gpu->hw_version < DMS_GPU_VERSION)
		return dev_err_probe(dev, -ENODEV,
				     "device version %u.%u unsupported (need %u.%u or a later 1.x)\n",
				     gpu->hw_version >> 16,
				     gpu->hw_version & 0xffff,
				     DMS_GPU_VERSION >> 16,
				     DMS_GPU_VERSION & 0xffff);
	return 0;
}

/* Claim BAR2 (device memory) and make it a peer-to-peer DMA target. */
static int dmsgpu_map_mem(struct dmsgpu *gpu)
{
	struct pci_dev *pdev = gpu->pdev;
	struct device *dev = &pdev->dev;
	int err;

	gpu->mem_size = lo_hi_readq(gpu->regs + DMS_GPU_REG_MEM_SIZE_LO);
	if (!gpu->mem_size || !PAGE_ALIGNED(gpu->mem_size) ||
	    gpu->mem_size > pci_resource_len(pdev, DMS_GPU_BAR_MEM))
		return dev_err_probe(dev, -ENODEV,
				     "bad device memory size %llu for BAR%d %pR\n",
				     gpu->mem_size, DMS_GPU_BAR_MEM,
				     &pdev->resource[DMS_GPU_BAR_MEM]);
	err = pcim_request_region(pdev, DMS_GPU_BAR_MEM, "dmsgpu");
	if (err)
		return dev_err_probe(dev, err, "cannot claim BAR%d\n",
				     DMS_GPU_BAR_MEM);
	gpu->mem_phys = pci_resource_start(pdev, DMS_GPU_BAR_MEM);
	/* CPU mappings are faulted in page by page: make them write-combined. */
	if (devm_arch_io_reserve_memtype_wc(dev, gpu->mem_phys, gpu->mem_size))
		dev_warn(dev, "device memory cannot be write-combined; CPU mappings will be uncached\n");

	/*
	 * Only the p2pdma provider (bus offset, map-type cache) of BAR2;
	 * pci_p2pdma_add_resource() would also create ZONE_DEVICE pages
	 * and a p2pmem pool that other kernel users (nvmet, ...) could
	 * allocate from behind our allocator's back. Importers need no
	 * struct pages.
	 */
	err = pcim_p2pdma_init(pdev);
	if (err)
		return dev_err_probe(dev, err, "cannot set up P2PDMA\n");
	gpu->provider = pcim_p2pdma_provider(pdev, DMS_GPU_BAR_MEM);
	if (!gpu->provider)
		return dev_err_probe(dev, -ENODEV, "BAR%d cannot be used for P2PDMA\n",
				     DMS_GPU_BAR_MEM);
	return 0;
}

/* Bus mastering, the copy engine's bounce buffer and the MSI-X vector. */
static int dmsgpu_init_dma(struct dmsgpu *gpu)
{
	struct pci_dev *pdev = gpu->pdev;
	struct device *dev = &pdev->dev;
	int err;

	err = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (err)
		return dev_err_probe(dev, err, "no usable DMA configuration\n");
	pci_set_master(pdev);

	for (gpu->bounce_size = DMSGPU_BOUNCE_SIZE; ; gpu->bounce_size /= 2) {
		gpu->bounce = dmam_alloc_coherent(dev, gpu->bounce_size,
						  &gpu->bounce_dma, GFP_KERNEL);
		if (gpu->bounce || gpu->bounce_size == PAGE_SIZE)
			break;
	}
	if (!gpu->bounce)
		return -ENOMEM;

	err = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSIX);
	if (err < 0)
		return dev_err_probe(dev, err, "cannot enable MSI-X\n");
	err = devm_request_irq(dev, pci_irq_vector(pdev, 0), dmsgpu_irq, 0,
			       gpu->name, gpu);
	if (err)
		return dev_err_probe(dev, err, "cannot request IRQ\n");
	writel(~0U, gpu->regs + DMS_GPU_REG_IRQ_STATUS);
	writel(DMS_GPU_IRQ_COPY_DONE | DMS_GPU_IRQ_CRC_DONE | DMS_GPU_IRQ_ERROR,
	       gpu->regs + DMS_GPU_REG_IRQ_MASK);
	return 0;
}

static int dmsgpu_init_hw(struct dmsgpu *gpu)
{
	return dmsgpu_map_regs(gpu) ?: dmsgpu_map_mem(gpu) ?:
	       dmsgpu_init_dma(gpu);
}

static int dmsgpu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct dmsgpu *gpu;
	int err;

	gpu = kzalloc_obj(*gpu);
	if (!gpu)
		return -ENOMEM;
	kref_init(&gpu->ref);
	gpu->pdev = pci_dev_get(pdev);
	mutex_init(&gpu->engine_lock);
	init_waitqueue_head(&gpu->engine_wq);
	INIT_LIST_HEAD(&gpu->bufs);
	mutex_init(&gpu->bufs_lock);
	init_waitqueue_head(&gpu->unmap_wq);
	/* The probe's reference, dropped after remove() or a failed probe. */
	err = devm_add_action_or_reset(dev, dmsgpu_put_action, gpu);
	if (err)
		return err;

	gpu->id = ida_alloc(&dmsgpu_ida, GFP_KERNEL);
	if (gpu->id < 0)
		return gpu->id;
	err = devm_add_action_or_reset(dev, dmsgpu_ida_free, gpu);
	if (err)
		return err;
	snprintf(gpu->name, sizeof(gpu->name), "dmsgpu%d", gpu->id);

	err = dmsgpu_init_hw(gpu);
	if (err)
		return err;

	gpu->pool = gen_pool_create(PAGE_SHIFT, dev_to_node(dev));
	if (!gpu->pool)
		return -ENOMEM;
	err = gen_pool_add(gpu->pool, gpu->mem_phys, gpu->mem_size,
			   dev_to_node(dev));
	if (err)
		return err;

	gpu->misc.minor = MISC_DYNAMIC_MINOR;
	gpu->misc.name = gpu->name;
	gpu->misc.fops = &dmsgpu_fops;
	gpu->misc.parent = dev;
	gpu->misc.groups = dmsgpu_groups;
	err = misc_register(&gpu->misc);
	if (err)
		return dev_err_probe(dev, err, "cannot register /dev/%s\n",
				     gpu->name);

	pci_set_drvdata(pdev, gpu);
	dev_info(dev,
		 "devmemsim GPU v%u.%u: %llu MiB device memory at %pR, /dev/%s\n",
		 gpu->hw_version >> 16, gpu->hw_version & 0xffff,
		 gpu->mem_size / SZ_1M, &pdev->resource[DMS_GPU_BAR_MEM],
		 gpu->name);
	return 0;
}

/*
 * Wait until importers have unmapped all device memory. Those that can be
 * told were (dmsgpu_revoke_bufs()) and unmap soon. Static importers (devmem
 * TCP, io_uring zcrx) cannot be: their DMA targets BAR2 until they let go,
 * and the next probe would hand that memory out again (or the BAR could go
 * to another device). A PCI remove cannot fail, so it waits, as vfio's
 * does for its users, and says which task waits for what.
 */
static void dmsgpu_wait_unmapped(struct dmsgpu *gpu)
{
	struct device *dev = &gpu->pdev->dev;
	unsigned long start = jiffies;

	if (wait_event_timeout(gpu->unmap_wq, !atomic_read(&gpu->nr_maps),
			       msecs_to_jiffies(DMSGPU_UNMAP_WAIT_MS)))
		return;
	dev_warn(dev,
		 "%d mapping(s) of device memory held by importers that cannot be revoked (e.g. devmem TCP bindings): task %s (%d) waits until they are unmapped\n",
		 atomic_read(&gpu->nr_maps), current->comm, task_pid_nr(current));
	while (!wait_event_timeout(gpu->unmap_wq, !atomic_read(&gpu->nr_maps),
				   msecs_to_jiffies(DMSGPU_UNMAP_SLICE_MS)))
		;
	dev_info(dev, "importers unmapped device memory after %u ms\n",
		 jiffies_to_msecs(jiffies - start));
}

/*
 * The order matters: no new user of the hardware, the engines quiet and
 * without DMA, no CPU mapping or importer mapping of device memory left;
 * then devres frees what the device could reach (bounce buffer, vector,
 * BARs).
 */
static void dmsgpu_remove(struct pci_dev *pdev)
{
	struct dmsgpu *gpu = pci_get_drvdata(pdev);

	misc_deregister(&gpu->misc);
	WRITE_ONCE(gpu->removed, true);
	synchronize_srcu(&dmsgpu_srcu);
	dmsgpu_engines_shutdown(gpu);
	dmsgpu_revoke_bufs(gpu);
	dmsgpu_wait_unmapped(gpu);
}

static const struct pci_device_id dmsgpu_ids[] = {
	{ PCI_DEVICE(DMS_PCI_VENDOR_ID, DMS_PCI_DEVICE_ID_GPU) },
	{ }
};
MODULE_DEVICE_TABLE(pci, dmsgpu_ids);

static struct pci_driver dmsgpu_driver = {
	.name = "dmsgpu",
	.id_table = dmsgpu_ids,
	.probe = dmsgpu_probe,
	.remove = dmsgpu_remove,
};
module_pci_driver(dmsgpu_driver);

MODULE_DESCRIPTION("devmemsim GPU-like device: device memory as dma-bufs, copy and CRC engines");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("DMA_BUF");
