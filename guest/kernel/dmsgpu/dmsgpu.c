// SPDX-License-Identifier: GPL-2.0
/*
 * dmsgpu: driver for the devmemsim GPU-like device (PCI 1af4:10f1).
 *
 * Probes the device, checks its identity registers and reports its device
 * memory (BAR2).
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/sizes.h>

#include <devmemsim/gpu_regs.h>
#include <devmemsim/pci_ids.h>

struct dmsgpu {
	struct pci_dev *pdev;
	void __iomem *regs;
	u64 mem_size;
};

static int dmsgpu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct dmsgpu *gpu;
	u32 magic, version;
	int err;

	gpu = devm_kzalloc(&pdev->dev, sizeof(*gpu), GFP_KERNEL);
	if (!gpu)
		return -ENOMEM;
	gpu->pdev = pdev;

	err = pcim_enable_device(pdev);
	if (err)
		return dev_err_probe(&pdev->dev, err, "cannot enable device\n");
	gpu->regs = pcim_iomap_region(pdev, DMS_GPU_BAR_REGS, "dmsgpu");
	if (IS_ERR(gpu->regs))
		return dev_err_probe(&pdev->dev, PTR_ERR(gpu->regs),
				     "cannot map BAR%d\n", DMS_GPU_BAR_REGS);

	magic = ioread32(gpu->regs + DMS_GPU_REG_ID);
	if (magic != DMS_GPU_ID_MAGIC)
		return dev_err_probe(&pdev->dev, -ENODEV,
				     "bad identity 0x%08x (want 0x%08x)\n",
				     magic, DMS_GPU_ID_MAGIC);
	version = ioread32(gpu->regs + DMS_GPU_REG_VERSION);
	gpu->mem_size = ioread32(gpu->regs + DMS_GPU_REG_MEM_SIZE_LO) |
			(u64)ioread32(gpu->regs + DMS_GPU_REG_MEM_SIZE_HI) << 32;
	if (gpu->mem_size > pci_resource_len(pdev, DMS_GPU_BAR_MEM))
		return dev_err_probe(&pdev->dev, -ENODEV,
				     "device memory %llu bytes exceeds BAR%d (%pR)\n",
				     gpu->mem_size, DMS_GPU_BAR_MEM,
				     &pdev->resource[DMS_GPU_BAR_MEM]);

	pci_set_drvdata(pdev, gpu);
	dev_info(&pdev->dev,
		 "devmemsim GPU v%u.%u: %llu MiB device memory at %pR\n",
		 version >> 16, version & 0xffff, gpu->mem_size / SZ_1M,
		 &pdev->resource[DMS_GPU_BAR_MEM]);
	return 0;
}

static void dmsgpu_remove(struct pci_dev *pdev)
{
	dev_info(&pdev->dev, "removed\n");
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

MODULE_DESCRIPTION("devmemsim GPU-like device");
MODULE_LICENSE("GPL");
