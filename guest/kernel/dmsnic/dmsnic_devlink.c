// SPDX-License-Identifier: GPL-2.0
/*
 * dmsnic: the device's devlink instance: `devlink dev info` (serial number
 * and versions the NIC reports) and one physical port, the netdev's.
 */
#include <linux/pci.h>
#include <net/devlink.h>

#include <devmemsim/pci_ids.h>

#include "dmsnic.h"

struct dmsnic_devlink {
	struct dmsnic_priv *priv;
};

static int dmsnic_devlink_info_get(struct devlink *devlink,
				   struct devlink_info_req *req,
				   struct netlink_ext_ack *extack)
{
	struct dmsnic_priv *priv =
		((struct dmsnic_devlink *)devlink_priv(devlink))->priv;
	u32 version = dmsnic_rd32(priv, DMS_NIC_REG_VERSION);
	char buf[32];
	int err;

	if (priv->caps & DMS_NIC_CAP_SERIAL) {
		u32 lo = dmsnic_rd32(priv, DMS_NIC_REG_SERIAL_LO);
		u32 hi = dmsnic_rd32(priv, DMS_NIC_REG_SERIAL_HI);

		snprintf(buf, sizeof(buf), "%08x%08x", hi, lo);
		err = devlink_info_serial_number_put(req, buf);
		if (err)
			return err;
	}
	snprintf(buf, sizeof(buf), "%04x:%04x", DMS_PCI_VENDOR_ID,
		 DMS_PCI_DEVICE_ID_NIC);
	err = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_ASIC_ID,
					     buf);
	if (err)
		return err;
	/* The register interface the device implements is its revision;
	 * the model has no firmware of its own, so fw is that version too.
	 */
	snprintf(buf, sizeof(buf), "%u.%u", version >> 16, version & 0xffff);
	err = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_ASIC_REV,
					     buf);
	if (err)
		return err;
	return devlink_info_version_running_put(req,
						DEVLINK_INFO_VERSION_GENERIC_FW,
						buf);
}

static const struct devlink_ops dmsnic_devlink_ops = {
	.info_get = dmsnic_devlink_info_get,
};

/* Before register_netdev(): the netdev's devlink port must exist first. */
int dmsnic_devlink_register(struct dmsnic_priv *priv)
{
	/* The model's wire is one serial link: one lane, not splittable. */
	struct devlink_port_attrs attrs = {
		.flavour = DEVLINK_PORT_FLAVOUR_PHYSICAL,
		.lanes = 1,
	};
	struct devlink *devlink;
	int err;

	devlink = devlink_alloc(&dmsnic_devlink_ops,
				sizeof(struct dmsnic_devlink), &priv->pdev->dev);
	if (!devlink)
		return -ENOMEM;
	((struct dmsnic_devlink *)devlink_priv(devlink))->priv = priv;
	devl_lock(devlink);
	devlink_port_attrs_set(&priv->devlink_port, &attrs);
	err = devl_port_register(devlink, &priv->devlink_port, 0);
	if (err) {
		devl_unlock(devlink);
		devlink_free(devlink);
		return err;
	}
	devl_register(devlink);
	devl_unlock(devlink);
	SET_NETDEV_DEVLINK_PORT(priv->netdev, &priv->devlink_port);
	priv->devlink = devlink;
	return 0;
}

/* After unregister_netdev(). */
void dmsnic_devlink_unregister(struct dmsnic_priv *priv)
{
	struct devlink *devlink = priv->devlink;

	devl_lock(devlink);
	devl_unregister(devlink);
	devl_port_unregister(&priv->devlink_port);
	devl_unlock(devlink);
	devlink_free(devlink);
}
