// SPDX-License-Identifier: GPL-2.0
/*
 * equiv_dump - read the ZONE_DEVICE struct pages a running kernel wrote.
 *
 * Part of equiv (python -m equiv.proofs --live): the host compares what this module reads
 * with the model's prediction.  Written for Linux 6.12 (x86_64, SPARSEMEM_VMEMMAP,
 * SPARSEMEM_EXTREME).  The dump files only read; the one file that changes the kernel is
 * "memremap", which creates (and removes) a dev_pagemap of a type no driver of the running
 * kernel provides, so that its struct pages can be dumped like a pmem namespace's.
 *
 * Files under /sys/kernel/debug/equiv_dump/:
 *
 *   layout     text, one "name value" line each (values decimal, pointers 0x-hex):
 *              the struct page layout and page->flags constants the model needs.
 *   range      write "START_PFN NR_PAGES" (decimal or 0x-hex) to choose the range;
 *              write one "PFN" to choose the whole range of the dev_pagemap holding PFN;
 *              read gives "START_PFN NR_PAGES" (decimal).
 *   pgmap      text, "name value" lines: the dev_pagemap of the range's first pfn
 *              (get_dev_pagemap), its altmap and ranges; "pgmap 0x0" if it has none.
 *   pages      binary: a 128-byte text header (ASCII, space padded, ending in '\n'):
 *                "equiv_dump pages 1 start_pfn=S nr_pages=N page_size=P record=R"
 *              then N records of R = 16 + P bytes, for pfn S, S+1, ... in order:
 *                u64 pfn, s64 status (0: read; -EFAULT: copy_from_kernel_nofault failed;
 *                -ENOENT: !pfn_valid), then the P raw bytes of the struct page
 *                (zeros unless status is 0).  Little-endian (x86_64).
 *   pageblocks text, one line per pageblock overlapping the range:
 *                "PFN BITS" (PFN of the pageblock's first page, decimal; BITS the
 *                NR_PAGEBLOCK_BITS bits of its usemap cell, decimal, PB_migrate in the
 *                low bits), or "PFN -1" when the section has no usemap.
 *   memremap   write "TYPE START SIZE SHIFT ALTMAP" to create one dev_pagemap with
 *              memremap_pages(): TYPE "coherent" (MEMORY_DEVICE_COHERENT) or "private"
 *              (MEMORY_DEVICE_PRIVATE, refused by a kernel without CONFIG_DEVICE_PRIVATE);
 *              START and SIZE the physical range (bytes, decimal or 0x-hex; memory the
 *              kernel does not use as System RAM, e.g. an e820 range reserved with
 *              memmap=SIZE$START); SHIFT the pgmap's vmemmap_shift; ALTMAP 1 to put the
 *              range's memmap in the range itself (a vmem_altmap at the range's first pfn,
 *              reserve 0, free the memmap's pfns rounded up to 2M and to the compound
 *              size, as drivers/nvdimm/pfn_devs.c places it after its info block), 0 for a
 *              memmap in System RAM.  Write "remove" to memunmap_pages() it (also done when
 *              the module is unloaded).  One such pgmap at a time.  A failed
 *              memremap_pages() returns its error to the writer and logs one line
 *              ("equiv_dump: memremap_pages(...) failed: -22") after the kernel's own warning.
 *              Read gives "none" or "TYPE START SIZE SHIFT ALTMAP pgmap POINTER".
 *
 * Kernel interfaces used (6.12):
 *   get_dev_pagemap(), put_dev_pagemap()   mm/memremap.c, include/linux/memremap.h
 *   struct dev_pagemap, struct vmem_altmap include/linux/memremap.h
 *   pfn_valid(), pfn_to_page()            include/linux/mmzone.h, include/asm-generic/memory_model.h
 *                                         (vmemmap_base: arch/x86/kernel/head64.c)
 *   copy_from_kernel_nofault()            mm/maccess.c
 *   __pfn_to_section(), section_to_usemap() include/linux/mmzone.h (mem_section: mm/sparse.c)
 *   the usemap cell arithmetic of pfn_to_bitidx() and get_pfnblock_flags_mask() in
 *   mm/page_alloc.c (neither is exported, so it is repeated here for CONFIG_SPARSEMEM)
 *   *_PGSHIFT, *_WIDTH                    include/linux/mmzone.h, include/linux/page-flags-layout.h
 *   memremap_pages(), memunmap_pages()    mm/memremap.c (its type switch: COHERENT needs
 *                                         ops->page_free and an owner; PRIVATE needs
 *                                         CONFIG_DEVICE_PRIVATE, migrate_to_ram, page_free and
 *                                         an owner; pagemap_range() refuses System RAM)
 *   struct dev_pagemap_ops                 include/linux/memremap.h
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/memremap.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pageblock-flags.h>
#include <linux/poison.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#define HDR_SIZE 128
#define REC_SIZE (16 + sizeof(struct page))

static DEFINE_MUTEX(dump_lock);
static unsigned long dump_start, dump_nr;
static struct dentry *dump_dir;

static int layout_show(struct seq_file *m, void *v)
{
#define C(name, val) seq_printf(m, "%s %lld\n", name, (long long)(val))
#define P(name, val) seq_printf(m, "%s 0x%lx\n", name, (unsigned long)(val))
	C("sizeof_struct_page", sizeof(struct page));
	C("sizeof_struct_folio", sizeof(struct folio));
	P("vmemmap_base", vmemmap_base);
	P("page_offset_base", page_offset_base);
	C("PAGE_SHIFT", PAGE_SHIFT);
	C("NR_PAGEFLAGS", NR_PAGEFLAGS);
	C("SECTIONS_PGSHIFT", SECTIONS_PGSHIFT);
	C("SECTIONS_WIDTH", SECTIONS_WIDTH);
	C("NODES_PGSHIFT", NODES_PGSHIFT);
	C("NODES_WIDTH", NODES_WIDTH);
	C("NODES_SHIFT", NODES_SHIFT);
	C("ZONES_PGSHIFT", ZONES_PGSHIFT);
	C("ZONES_WIDTH", ZONES_WIDTH);
	C("LAST_CPUPID_PGSHIFT", LAST_CPUPID_PGSHIFT);
	C("LAST_CPUPID_WIDTH", LAST_CPUPID_WIDTH);
	C("KASAN_TAG_PGSHIFT", KASAN_TAG_PGSHIFT);
	C("KASAN_TAG_WIDTH", KASAN_TAG_WIDTH);
#ifdef CONFIG_LRU_GEN
	C("LRU_GEN_PGOFF", LRU_GEN_PGOFF);
	C("LRU_GEN_WIDTH", LRU_GEN_WIDTH);
	C("LRU_REFS_PGOFF", LRU_REFS_PGOFF);
	C("LRU_REFS_WIDTH", LRU_REFS_WIDTH);
#endif
	C("ZONE_DEVICE", ZONE_DEVICE);
	C("MAX_NR_ZONES", MAX_NR_ZONES);
	C("MAX_PAGE_ORDER", MAX_PAGE_ORDER);
	C("pageblock_order", pageblock_order);
	C("NR_PAGEBLOCK_BITS", NR_PAGEBLOCK_BITS);
	C("MIGRATE_MOVABLE", MIGRATE_MOVABLE);
	C("PAGES_PER_SECTION", PAGES_PER_SECTION);
	C("SECTION_SIZE_BITS", SECTION_SIZE_BITS);
	C("PG_reserved", PG_reserved);
	C("PG_head", PG_head);
	P("TAIL_MAPPING", TAIL_MAPPING);
	C("MEMORY_DEVICE_PRIVATE", MEMORY_DEVICE_PRIVATE);
	C("MEMORY_DEVICE_COHERENT", MEMORY_DEVICE_COHERENT);
	C("MEMORY_DEVICE_FS_DAX", MEMORY_DEVICE_FS_DAX);
	C("MEMORY_DEVICE_GENERIC", MEMORY_DEVICE_GENERIC);
	C("MEMORY_DEVICE_PCI_P2PDMA", MEMORY_DEVICE_PCI_P2PDMA);
	C("PGMAP_ALTMAP_VALID", PGMAP_ALTMAP_VALID);
	C("offsetof_page_flags", offsetof(struct page, flags));
	C("offsetof_page_compound_head", offsetof(struct page, compound_head));
	C("offsetof_page_pgmap", offsetof(struct page, pgmap));
	C("offsetof_page_mapcount", offsetof(struct page, _mapcount));
	C("offsetof_page_refcount", offsetof(struct page, _refcount));
	C("offsetof_folio_nr_pages", offsetof(struct folio, _folio_nr_pages));
#undef C
#undef P
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(layout);

static int range_show(struct seq_file *m, void *v)
{
	mutex_lock(&dump_lock);
	seq_printf(m, "%lu %lu\n", dump_start, dump_nr);
	mutex_unlock(&dump_lock);
	return 0;
}

static int range_open(struct inode *inode, struct file *file)
{
	return single_open(file, range_show, NULL);
}

static ssize_t range_write(struct file *file, const char __user *ubuf, size_t len,
			   loff_t *ppos)
{
	char buf[64];
	unsigned long a, b;
	struct dev_pagemap *pgmap;
	int i, n;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	n = sscanf(buf, "%li %li", &a, &b);
	if (n == 2) {
		mutex_lock(&dump_lock);
		dump_start = a;
		dump_nr = b;
		mutex_unlock(&dump_lock);
		return len;
	}
	if (n != 1)
		return -EINVAL;
	pgmap = get_dev_pagemap(a, NULL);
	if (!pgmap)
		return -ENOENT;
	for (i = 0; i < pgmap->nr_range; i++) {
		const struct range *r = &pgmap->ranges[i];

		if (a >= PHYS_PFN(r->start) && a <= PHYS_PFN(r->end)) {
			mutex_lock(&dump_lock);
			dump_start = PHYS_PFN(r->start);
			dump_nr = PHYS_PFN(r->end) + 1 - dump_start;
			mutex_unlock(&dump_lock);
			break;
		}
	}
	put_dev_pagemap(pgmap);
	return i < pgmap->nr_range ? len : -ENOENT;
}

static const struct file_operations range_fops = {
	.owner = THIS_MODULE,
	.open = range_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = range_write,
};

static int pgmap_show(struct seq_file *m, void *v)
{
	struct dev_pagemap *pgmap;
	unsigned long start;
	int i;

	mutex_lock(&dump_lock);
	start = dump_start;
	mutex_unlock(&dump_lock);
	pgmap = get_dev_pagemap(start, NULL);
	seq_printf(m, "pfn %lu\n", start);
	seq_printf(m, "pgmap 0x%lx\n", (unsigned long)pgmap);
	if (!pgmap)
		return 0;
	seq_printf(m, "type %d\n", pgmap->type);
	seq_printf(m, "flags 0x%x\n", pgmap->flags);
	seq_printf(m, "vmemmap_shift %lu\n", pgmap->vmemmap_shift);
	seq_printf(m, "ops 0x%lx\n", (unsigned long)pgmap->ops);
	seq_printf(m, "owner 0x%lx\n", (unsigned long)pgmap->owner);
	seq_printf(m, "altmap.base_pfn %lu\n", pgmap->altmap.base_pfn);
	seq_printf(m, "altmap.end_pfn %lu\n", pgmap->altmap.end_pfn);
	seq_printf(m, "altmap.reserve %lu\n", pgmap->altmap.reserve);
	seq_printf(m, "altmap.free %lu\n", pgmap->altmap.free);
	seq_printf(m, "altmap.align %lu\n", pgmap->altmap.align);
	seq_printf(m, "altmap.alloc %lu\n", pgmap->altmap.alloc);
	seq_printf(m, "altmap.inaccessible %d\n", pgmap->altmap.inaccessible);
	seq_printf(m, "nr_range %d\n", pgmap->nr_range);
	for (i = 0; i < pgmap->nr_range; i++)
		seq_printf(m, "range%d 0x%llx 0x%llx\n", i,
			   (unsigned long long)pgmap->ranges[i].start,
			   (unsigned long long)pgmap->ranges[i].end);
	put_dev_pagemap(pgmap);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pgmap);

/* One record of the pages file: pfn, status, raw struct page. */
static void fill_record(u8 *rec, unsigned long pfn)
{
	s64 status = 0;

	memset(rec, 0, REC_SIZE);
	memcpy(rec, &(u64){ pfn }, 8);
	if (!pfn_valid(pfn))
		status = -ENOENT;
	else if (copy_from_kernel_nofault(rec + 16, pfn_to_page(pfn), sizeof(struct page))) {
		memset(rec + 16, 0, sizeof(struct page));
		status = -EFAULT;
	}
	memcpy(rec + 8, &status, 8);
}

static ssize_t pages_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	u8 buf[HDR_SIZE > REC_SIZE ? HDR_SIZE : REC_SIZE];
	unsigned long start, nr;
	loff_t pos = *ppos, total;
	size_t done = 0;

	mutex_lock(&dump_lock);
	start = dump_start;
	nr = dump_nr;
	mutex_unlock(&dump_lock);
	total = HDR_SIZE + (loff_t)nr * REC_SIZE;
	while (done < len && pos < total) {
		size_t off, chunk;

		if (pos < HDR_SIZE) {
			int n = scnprintf(buf, HDR_SIZE,
				"equiv_dump pages 1 start_pfn=%lu nr_pages=%lu page_size=%zu record=%zu",
				start, nr, sizeof(struct page), (size_t)REC_SIZE);
			memset(buf + n, ' ', HDR_SIZE - n);
			buf[HDR_SIZE - 1] = '\n';
			off = pos;
			chunk = min_t(size_t, HDR_SIZE - off, len - done);
		} else {
			loff_t rel = pos - HDR_SIZE;

			fill_record(buf, start + div_u64(rel, REC_SIZE));
			off = rel - div_u64(rel, REC_SIZE) * REC_SIZE;
			chunk = min_t(size_t, REC_SIZE - off, len - done);
		}
		if (copy_to_user(ubuf + done, buf + off, chunk))
			return done ? done : -EFAULT;
		done += chunk;
		pos += chunk;
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	*ppos = pos;
	return done;
}

static const struct file_operations pages_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = pages_read,
	.llseek = default_llseek,
};

/* The NR_PAGEBLOCK_BITS bits of pfn's usemap cell, as get_pfnblock_flags_mask() reads them. */
static long pageblock_bits(unsigned long pfn)
{
	struct mem_section *ms = __pfn_to_section(pfn);
	unsigned long *bitmap, bitidx, word;

	if (!ms || !valid_section(ms) || !ms->usage)
		return -1;
	bitmap = section_to_usemap(ms);
	bitidx = ((pfn & (PAGES_PER_SECTION - 1)) >> pageblock_order) * NR_PAGEBLOCK_BITS;
	word = READ_ONCE(bitmap[bitidx / BITS_PER_LONG]);
	return (word >> (bitidx & (BITS_PER_LONG - 1))) & ((1UL << NR_PAGEBLOCK_BITS) - 1);
}

static int pageblocks_show(struct seq_file *m, void *v)
{
	unsigned long start, nr, pfn;

	mutex_lock(&dump_lock);
	start = dump_start;
	nr = dump_nr;
	mutex_unlock(&dump_lock);
	for (pfn = ALIGN_DOWN(start, pageblock_nr_pages); pfn < start + nr;
	     pfn += pageblock_nr_pages)
		seq_printf(m, "%lu %ld\n", pfn, pageblock_bits(pfn));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pageblocks);

/* ---- memremap: one dev_pagemap of the module's own -------------------------------- */

static DEFINE_MUTEX(memremap_lock);
static struct dev_pagemap *own_pgmap;	/* under memremap_lock */
static int own_altmap;
/* pgmap->owner: any unique pointer (migrate_vma_setup() matches it); nothing uses it here */
static char own_owner;

/* The pages are never handed out (nothing allocates them), so the callbacks never run;
 * memremap_pages() only requires them to exist. */
static void own_page_free(struct page *page)
{
}

static vm_fault_t own_migrate_to_ram(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct dev_pagemap_ops own_pgmap_ops = {
	.page_free = own_page_free,
	.migrate_to_ram = own_migrate_to_ram,
};

static const char *type_name(enum memory_type type)
{
	return type == MEMORY_DEVICE_COHERENT ? "coherent" :
	       type == MEMORY_DEVICE_PRIVATE ? "private" : "?";
}

static void own_remove(void)
{
	if (!own_pgmap)
		return;
	memunmap_pages(own_pgmap);
	kfree(own_pgmap);
	own_pgmap = NULL;
}

static int own_create(enum memory_type type, u64 start, u64 size, unsigned long shift,
		      int altmap)
{
	struct dev_pagemap *pgmap;
	unsigned long nr, free;
	void *va;

	if (!size || !PAGE_ALIGNED(start) || !PAGE_ALIGNED(size) || shift >= BITS_PER_LONG ||
	    (altmap && type == MEMORY_DEVICE_PRIVATE))
		return -EINVAL;
	nr = PHYS_PFN(size);
	pgmap = kzalloc(sizeof(*pgmap), GFP_KERNEL);
	if (!pgmap)
		return -ENOMEM;
	pgmap->type = type;
	pgmap->range.start = start;
	pgmap->range.end = start + size - 1;
	pgmap->nr_range = 1;
	pgmap->vmemmap_shift = shift;
	pgmap->ops = &own_pgmap_ops;
	pgmap->owner = &own_owner;
	if (altmap) {
		/* vmem_altmap's end_pfn and reserve are const: filled by a copy, as
		 * drivers/nvdimm/pfn_devs.c __nvdimm_setup_pfn() does */
		free = DIV_ROUND_UP(nr * sizeof(struct page), PAGE_SIZE);
		free = ALIGN(free, max_t(unsigned long, PTRS_PER_PMD, 1UL << shift));
		if (free >= nr) {
			kfree(pgmap);
			return -EINVAL;
		}
		{
			struct vmem_altmap a = {
				.base_pfn = PHYS_PFN(start),
				.end_pfn = PHYS_PFN(start + size - 1),
				.reserve = 0,
				.free = free,
			};

			memcpy(&pgmap->altmap, &a, sizeof(a));
		}
		pgmap->flags |= PGMAP_ALTMAP_VALID;
	}
	va = memremap_pages(pgmap, NUMA_NO_NODE);
	if (IS_ERR(va)) {
		pr_warn("equiv_dump: memremap_pages(%s, %#llx-%#llx, vmemmap_shift %lu, altmap %d) "
			"failed: %ld\n", type_name(type), start, start + size - 1, shift, altmap,
			PTR_ERR(va));
		kfree(pgmap);
		return PTR_ERR(va);
	}
	own_pgmap = pgmap;
	own_altmap = altmap;
	pr_info("equiv_dump: memremap_pages(%s, %#llx-%#llx, vmemmap_shift %lu, altmap %d): "
		"pgmap %px\n", type_name(type), start, start + size - 1, shift, altmap, pgmap);
	return 0;
}

static int memremap_show(struct seq_file *m, void *v)
{
	mutex_lock(&memremap_lock);
	if (!own_pgmap)
		seq_puts(m, "none\n");
	else
		seq_printf(m, "%s %#llx %#llx %lu %d pgmap 0x%lx\n", type_name(own_pgmap->type),
			   (unsigned long long)own_pgmap->range.start,
			   (unsigned long long)range_len(&own_pgmap->range),
			   own_pgmap->vmemmap_shift, own_altmap, (unsigned long)own_pgmap);
	mutex_unlock(&memremap_lock);
	return 0;
}

static int memremap_open(struct inode *inode, struct file *file)
{
	return single_open(file, memremap_show, NULL);
}

static ssize_t memremap_write(struct file *file, const char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	char buf[128], name[16];
	long long start, size;
	unsigned long shift;
	enum memory_type type;
	int altmap, err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sysfs_streq(buf, "remove")) {
		mutex_lock(&memremap_lock);
		err = own_pgmap ? 0 : -ENOENT;
		own_remove();
		mutex_unlock(&memremap_lock);
		return err ? err : len;
	}
	if (sscanf(buf, "%15s %lli %lli %lu %d", name, &start, &size, &shift, &altmap) != 5 ||
	    start < 0 || size < 0 || (altmap != 0 && altmap != 1))
		return -EINVAL;
	if (!strcmp(name, "coherent"))
		type = MEMORY_DEVICE_COHERENT;
	else if (!strcmp(name, "private"))
		type = MEMORY_DEVICE_PRIVATE;
	else
		return -EINVAL;
	mutex_lock(&memremap_lock);
	err = own_pgmap ? -EBUSY : own_create(type, start, size, shift, altmap);
	mutex_unlock(&memremap_lock);
	return err ? err : len;
}

static const struct file_operations memremap_fops = {
	.owner = THIS_MODULE,
	.open = memremap_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = memremap_write,
};

static int __init equiv_dump_init(void)
{
	dump_dir = debugfs_create_dir("equiv_dump", NULL);
	debugfs_create_file("layout", 0400, dump_dir, NULL, &layout_fops);
	debugfs_create_file("range", 0600, dump_dir, NULL, &range_fops);
	debugfs_create_file("pgmap", 0400, dump_dir, NULL, &pgmap_fops);
	debugfs_create_file("pages", 0400, dump_dir, NULL, &pages_fops);
	debugfs_create_file("pageblocks", 0400, dump_dir, NULL, &pageblocks_fops);
	debugfs_create_file("memremap", 0600, dump_dir, NULL, &memremap_fops);
	return 0;
}

static void __exit equiv_dump_exit(void)
{
	debugfs_remove_recursive(dump_dir);
	mutex_lock(&memremap_lock);
	own_remove();
	mutex_unlock(&memremap_lock);
}

module_init(equiv_dump_init);
module_exit(equiv_dump_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("equiv: read ZONE_DEVICE struct pages, pgmaps and pageblock bits; "
		   "create a MEMORY_DEVICE_COHERENT/PRIVATE pgmap");
