// SPDX-License-Identifier: GPL-2.0
/*
 * dmsgpu dma-buf exporter: each allocation of device memory is one
 * dma-buf. Importers get bus addresses inside BAR2 (peer-to-peer DMA);
 * user space may mmap it write-combined.
 */
#include <linux/dma-buf.h>
#include <linux/dma-buf-mapping.h>
#include <linux/dma-mapping.h>
#include <linux/genalloc.h>
#include <linux/mm.h>
#include <linux/pci-p2pdma.h>
#include <linux/slab.h>

#include "dmsgpu.h"

/*
 * No .attach and no .pin: the memory never moves, so every importer is
 * accepted, including static ones (dma_buf_attach(), attach->peer2peer
 * false) like devmem TCP and io_uring zcrx. Whether the importing device
 * can reach BAR2 is decided when it maps the buffer.
 */
static struct sg_table *dmsgpu_map_dma_buf(struct dma_buf_attachment *attach,
					   enum dma_data_direction dir)
{
	struct dmsgpu_buf *buf = attach->dmabuf->priv;
	struct dmsgpu *gpu = buf->gpu;
	struct phys_vec range = {
		.paddr = gpu->mem_phys + buf->offset,
		.len = buf->size,
	};
	struct sg_table *sgt;
	int idx;

	if (!dmsgpu_enter(gpu, &idx))
		return ERR_PTR(-ENODEV);
	if (pci_p2pdma_distance(gpu->pdev, attach->dev, true) < 0) {
		dev_err(&gpu->pdev->dev,
			"cannot map device memory for %s: no peer-to-peer DMA path between the devices\n",
			dev_name(attach->dev));
		sgt = ERR_PTR(-EREMOTEIO);
		goto out;
	}
	/*
	 * Bus addresses when the path stays below a switch
	 * (PCI_P2PDMA_MAP_BUS_ADDR), else a dma_map_resource()-style mapping
	 * for the importer (through an allow-listed host bridge).
	 */
	sgt = dma_buf_phys_vec_to_sgt(attach, gpu->provider, &range, 1,
				      buf->size, dir);
	if (IS_ERR(sgt))
		dev_err(&gpu->pdev->dev, "cannot map device memory for %s: %pe\n",
			dev_name(attach->dev), sgt);
out:
	dmsgpu_exit(idx);
	return sgt;
}

static void dmsgpu_unmap_dma_buf(struct dma_buf_attachment *attach,
				 struct sg_table *sgt,
				 enum dma_data_direction dir)
{
	dma_buf_free_sgt(attach, sgt, dir);
}

static int dmsgpu_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct dmsgpu_buf *buf = dmabuf->priv;
	struct dmsgpu *gpu = buf->gpu;
	int idx, ret;

	if (!dmsgpu_enter(gpu, &idx))
		return -ENODEV;
	vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	ret = vm_iomap_memory(vma, gpu->mem_phys + buf->offset, buf->size);
	dmsgpu_exit(idx);
	return ret;
}

static void dmsgpu_dmabuf_release(struct dma_buf *dmabuf)
{
	struct dmsgpu_buf *buf = dmabuf->priv;
	struct dmsgpu *gpu = buf->gpu;

	gen_pool_free(gpu->pool, gpu->mem_phys + buf->offset, buf->size);
	atomic_dec(&gpu->nr_bufs);
	kfree(buf);
	dmsgpu_put(gpu);
}

static const struct dma_buf_ops dmsgpu_dmabuf_ops = {
	.map_dma_buf = dmsgpu_map_dma_buf,
	.unmap_dma_buf = dmsgpu_unmap_dma_buf,
	.mmap = dmsgpu_dmabuf_mmap,
	.release = dmsgpu_dmabuf_release,
};

/*
 * Allocate @size bytes (page aligned) of device memory at an @align
 * boundary and export them as a dma-buf, whose release frees them.
 */
struct dma_buf *dmsgpu_buf_export(struct dmsgpu *gpu, u64 size, u64 align)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);
	struct genpool_data_align data = { .align = align };
	struct dmsgpu_buf *buf;
	struct dma_buf *dmabuf;
	unsigned long addr;

	buf = kzalloc_obj(*buf);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	addr = gen_pool_alloc_algo(gpu->pool, size, gen_pool_first_fit_align,
				   &data);
	if (!addr) {
		kfree(buf);
		return ERR_PTR(-ENOMEM);
	}
	buf->gpu = gpu;
	buf->offset = addr - gpu->mem_phys;
	buf->size = size;

	exp.ops = &dmsgpu_dmabuf_ops;
	exp.size = buf->size;
	exp.flags = O_RDWR;
	exp.priv = buf;
	dmabuf = dma_buf_export(&exp);
	if (IS_ERR(dmabuf)) {
		gen_pool_free(gpu->pool, addr, buf->size);
		kfree(buf);
		return dmabuf;
	}
	/* From here on the dma-buf's release frees buf and the memory. */
	kref_get(&gpu->ref);
	atomic_inc(&gpu->nr_bufs);
	return dmabuf;
}

/*
 * Look up a dma-buf of this device and check that [offset, offset + len)
 * lies inside it. The caller puts buf's dma-buf (returned in *dmabuf).
 */
struct dmsgpu_buf *dmsgpu_buf_get(struct dmsgpu *gpu, int fd, u64 offset,
				  u64 len, struct dma_buf **dmabuf)
{
	struct dmsgpu_buf *buf;

	*dmabuf = dma_buf_get(fd);
	if (IS_ERR(*dmabuf))
		return ERR_CAST(*dmabuf);
	buf = (*dmabuf)->priv;
	if ((*dmabuf)->ops != &dmsgpu_dmabuf_ops || buf->gpu != gpu ||
	    offset > buf->size || len > buf->size - offset) {
		dma_buf_put(*dmabuf);
		return ERR_PTR(-EINVAL);
	}
	return buf;
}
