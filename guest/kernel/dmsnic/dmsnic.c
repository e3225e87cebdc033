// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic: driver for the devmemsim header-split NIC (PCI 1af4:10f0).
 *
 * Probes the device, checks its identity registers and reports its queue
 * pairs and MAC address.
 */
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/pci.h>

#include <devmemsim/nic_regs.h>
#include <devmemsim/pci_ids.h>

struct dmsnic {
	struct pci_dev *pdev;
	void __iomem *regs;
	u32 num_queues;
	u8 mac[ETH_ALEN];
};

static int dmsnic_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct dmsnic *nic;
	u32 magic, version, lo, hi;
	int err;

	nic = devm_kzalloc(&pdev->dev, sizeof(*nic), GFP_KERNEL);
	if (!nic)
		return -ENOMEM;
	nic->pdev = pdev;

	err = pcim_enable_device(pdev);
	if (err)
		return dev_err_probe(&pdev->dev, err, "cannot enable device\n");
	nic->regs = pcim_iomap_region(pdev, DMS_NIC_BAR_REGS, "dmsnic");
	if (IS_ERR(nic->regs))
		return dev_err_probe(&pdev->dev, PTR_ERR(nic->regs),
				     "cannot map BAR%d\n", DMS_NIC_BAR_REGS);

	magic = ioread32(nic->regs + DMS_NIC_REG_ID);
	if (magic != DMS_NIC_ID_MAGIC)
		return dev_err_probe(&pdev->dev, -ENODEV,
				     "bad identity 0x%08x (want 0x%08x)\n",
				     magic, DMS_NIC_ID_MAGIC);
	version = ioread32(nic->regs + DMS_NIC_REG_VERSION);
	nic->num_queues = ioread32(nic->regs + DMS_NIC_REG_NUM_QUEUES);
	lo = ioread32(nic->regs + DMS_NIC_REG_MAC_LO);
	hi = ioread32(nic->regs + DMS_NIC_REG_MAC_HI);
	nic->mac[0] = lo;
	nic->mac[1] = lo >> 8;
	nic->mac[2] = lo >> 16;
	nic->mac[3] = lo >> 24;
	nic->mac[4] = hi;
	nic->mac[5] = hi >> 8;

	pci_set_drvdata(pdev, nic);
	dev_info(&pdev->dev, "devmemsim NIC v%u.%u: %u queue pairs, MAC %pM\n",
		 version >> 16, version & 0xffff, nic->num_queues, nic->mac);
	return 0;
}

static void dmsnic_remove(struct pci_dev *pdev)
{
	dev_info(&pdev->dev, "removed\n");
}

static const struct pci_device_id dmsnic_ids[] = {
	{ PCI_DEVICE(DMS_PCI_VENDOR_ID, DMS_PCI_DEVICE_ID_NIC) },
	{ }
};
MODULE_DEVICE_TABLE(pci, dmsnic_ids);

static struct pci_driver dmsnic_driver = {
	.name = "dmsnic",
	.id_table = dmsnic_ids,
	.probe = dmsnic_probe,
	.remove = dmsnic_remove,
};
module_pci_driver(dmsnic_driver);

MODULE_DESCRIPTION("devmemsim header-split NIC");
MODULE_LICENSE("GPL");
