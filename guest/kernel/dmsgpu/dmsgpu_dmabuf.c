// SPDX-License-Identifier: GPL-2.0
/*
 * dmsgpu dma-buf exporter: each allocation of device memory is one
 * dma-buf. Importers get bus addresses inside BAR2 (peer-to-peer DMA);
 * user space may mmap it write-combined.
 */
#include <linux/dma-buf.h>
#include <linux/dma-buf-mapping.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/file.h>
#include <linux/genalloc.h>
#include <linux/mm.h>
#include <linux/pci-p2pdma.h>
#include <linux/slab.h>

#include "dmsgpu.h"

/*
 * Who may import device memory. Its mapping holds bus addresses in BAR2
 * and no struct pages, so only importers that expect that may attach:
 *  - dynamic importers must say so (importer_ops->allow_peer2peer);
 *  - static importers (dma_buf_attach(): attach->peer2peer is always
 *    false) are accepted: that is the only way devmem TCP and io_uring
 *    zcrx attach, and both read nothing but the DMA addresses. The memory
 *    never moves, so there is no .pin. They cannot be revoked either
 *    (dma_buf_attach_revocable() is false): remove() waits for them.
 * The importing device must also reach BAR2 by peer-to-peer DMA.
 */
static int dmsgpu_dmabuf_attach(struct dma_buf *dmabuf,
				struct dma_buf_attachment *attach)
{
	struct dmsgpu_buf *buf = dmabuf->priv;
	struct dmsgpu *gpu = buf->gpu;
	int idx, ret = 0;

	if (!dmsgpu_enter(gpu, &idx))
		return -ENODEV;
	if (attach->importer_ops && !attach->peer2peer) {
		dev_warn_ratelimited(&gpu->pdev->dev,
				     "%s cannot import device memory: it does not accept peer-to-peer addresses\n",
				     dev_name(attach->dev));
		ret = -EOPNOTSUPP;
	} else if (pci_p2pdma_distance(gpu->pdev, attach->dev, false) < 0) {
		dev_warn_ratelimited(&gpu->pdev->dev,
				     "%s cannot import device memory: no peer-to-peer DMA path between the devices\n",
				     dev_name(attach->dev));
		ret = -EREMOTEIO;
	}
	dmsgpu_exit(idx);
	return ret;
}

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
	/*
	 * Bus addresses when the path stays below a switch
	 * (PCI_P2PDMA_MAP_BUS_ADDR), else a dma_map_resource()-style mapping
	 * for the importer (through an allow-listed host bridge).
	 */
	sgt = dma_buf_phys_vec_to_sgt(attach, gpu->provider, &range, 1,
				      buf->size, dir);
	if (IS_ERR(sgt))
		dev_err_ratelimited(&gpu->pdev->dev,
				    "cannot map device memory for %s: %pe\n",
				    dev_name(attach->dev), sgt);
	else
		atomic_inc(&gpu->nr_maps);
	dmsgpu_exit(idx);
	return sgt;
}

static void dmsgpu_unmap_dma_buf(struct dma_buf_attachment *attach,
				 struct sg_table *sgt,
				 enum dma_data_direction dir)
{
	struct dmsgpu_buf *buf = attach->dmabuf->priv;
	struct dmsgpu *gpu = buf->gpu;

	/*
	 * dma_buf_phys_vec_to_sgt() (Linux 7.3) zeroes orig_nents, as the
	 * table has no CPU list, but dma_buf_free_sgt() frees it with
	 * sg_free_table(), which walks orig_nents: the scatterlist array
	 * would leak once per mapping (kmemleak under the debug kernel).
	 * Give the table back its allocated length first; the sg_alloc_table()
	 * there set nents to it and nothing changes it afterwards.
	 */
	sgt->orig_nents = sgt->nents;
	dma_buf_free_sgt(attach, sgt, dir);
	if (atomic_dec_and_test(&gpu->nr_maps))
		wake_up(&gpu->unmap_wq);
}

/*
 * CPU mappings are filled page by page on fault, inside the removal SRCU
 * section: once remove() has zapped them, every access gets SIGBUS.
 */
static vm_fault_t dmsgpu_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct dmsgpu_buf *buf = vma->vm_private_data;
	struct dmsgpu *gpu = buf->gpu;
	vm_fault_t ret;
	int idx;

	if (vmf->pgoff >= buf->size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	if (!dmsgpu_enter(gpu, &idx))
		return VM_FAULT_SIGBUS;
	ret = vmf_insert_pfn(vma, vmf->address,
			     PHYS_PFN(gpu->mem_phys + buf->offset) + vmf->pgoff);
	dmsgpu_exit(idx);
	return ret;
}

static const struct vm_operations_struct dmsgpu_vm_ops = {
	.fault = dmsgpu_vm_fault,
};

static int dmsgpu_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct dmsgpu_buf *buf = dmabuf->priv;
	int idx;

	/*
	 * MAP_SHARED only: a private mapping of a writable file is
	 * copy-on-write, and device memory has no pages to copy
	 * (vmf_insert_pfn() refuses such a VMA with a BUG).
	 */
	if (vma_is_cow_mapping(vma))
		return -EINVAL;
	if (!dmsgpu_enter(buf->gpu, &idx))
		return -ENODEV;
	/* The dma-buf core checked that the range lies inside the buffer. */
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	vma->vm_private_data = buf;
	vma->vm_ops = &dmsgpu_vm_ops;
	dmsgpu_exit(idx);
	return 0;
}

static void dmsgpu_dmabuf_release(struct dma_buf *dmabuf)
{
	struct dmsgpu_buf *buf = dmabuf->priv;
	struct dmsgpu *gpu = buf->gpu;

	mutex_lock(&gpu->bufs_lock);
	list_del(&buf->node);
	mutex_unlock(&gpu->bufs_lock);
	gen_pool_free(gpu->pool, gpu->mem_phys + buf->offset, buf->size);
	atomic_dec(&gpu->nr_bufs);
	kfree(buf);
	dmsgpu_put(gpu);
}

static const struct dma_buf_ops dmsgpu_dmabuf_ops = {
	.attach = dmsgpu_dmabuf_attach,
	.map_dma_buf = dmsgpu_map_dma_buf,
	.unmap_dma_buf = dmsgpu_unmap_dma_buf,
	.mmap = dmsgpu_dmabuf_mmap,
	.release = dmsgpu_dmabuf_release,
};

/* dmsgpu_buf_export() once the device is known to be there. */
static struct dma_buf *dmsgpu_buf_new(struct dmsgpu *gpu, u64 size, u64 align)
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

	/*
	 * Name the exporting GPU (dmsgpuN, e.g. in debugfs' bufinfo). The
	 * core reads exp_name while the dma-buf is open or listed; the buffer
	 * holds a reference on gpu until its release, after both.
	 */
	exp.exp_name = gpu->name;
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
	buf->dmabuf = dmabuf;
	kref_get(&gpu->ref);
	atomic_inc(&gpu->nr_bufs);
	mutex_lock(&gpu->bufs_lock);
	list_add(&buf->node, &gpu->bufs);
	mutex_unlock(&gpu->bufs_lock);
	return dmabuf;
}

/*
 * Allocate @size bytes (page aligned) of device memory at an @align
 * boundary and export them as a dma-buf, whose release frees them. Inside
 * the removal SRCU section: remove() revokes every buffer exported before
 * it, and none is exported after.
 */
struct dma_buf *dmsgpu_buf_export(struct dmsgpu *gpu, u64 size, u64 align)
{
	struct dma_buf *dmabuf;
	int idx;

	if (!dmsgpu_enter(gpu, &idx))
		return ERR_PTR(-ENODEV);
	dmabuf = dmsgpu_buf_new(gpu, size, align);
	dmsgpu_exit(idx);
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

/*
 * The device is gone (remove() after synchronize_srcu()): zap every CPU
 * mapping of its buffers, so the next access faults and gets SIGBUS, tell
 * importers that can drop their DMA mappings to do so, and wait for their
 * fences (dma_buf_invalidate_mappings(): until then they may still access
 * the memory). A buffer whose file is already gone has no mapping and no
 * importer left (each holds a reference to it) and is being released:
 * skip it. The others cannot be released while the walk holds their file.
 */
void dmsgpu_revoke_bufs(struct dmsgpu *gpu)
{
	struct dmsgpu_buf *buf, *next;
	struct dma_buf *dmabuf;
	LIST_HEAD(live);

	mutex_lock(&gpu->bufs_lock);
	list_for_each_entry(buf, &gpu->bufs, node)
		if (get_file_active(&buf->dmabuf->file))
			list_add_tail(&buf->revoke_node, &live);
	mutex_unlock(&gpu->bufs_lock);

	list_for_each_entry_safe(buf, next, &live, revoke_node) {
		dmabuf = buf->dmabuf;
		unmap_mapping_range(dmabuf->file->f_mapping, 0, 0, 1);
		dma_resv_lock(dmabuf->resv, NULL);
		dma_buf_invalidate_mappings(dmabuf);
		dma_resv_unlock(dmabuf->resv);
		dma_resv_wait_timeout(dmabuf->resv, DMA_RESV_USAGE_BOOKKEEP,
				      false, MAX_SCHEDULE_TIMEOUT);
		fput(dmabuf->file);
	}
}
