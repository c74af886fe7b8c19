// SPDX-License-Identifier: GPL-2.0
/*
 * The pinned maps' structs have the sizes recorded beside IA_MAPS_LAYOUT
 * (include/inagg/maps.h), in user space's view and in the datapath's (the
 * BTF of the BPF objects that use a switch's maps): a struct changed
 * without a bump of the layout and its new size recorded fails here, before
 * an upgrade's new programs meet an old package's pins that libbpf would
 * take. Opening a skeleton loads nothing: no root needed.
 */
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "inagg/maps.h"
#include "bpf/inagg.skel.h"
#include "bpf/inagg_tail.skel.h"
#include "bpf/inagg_other.skel.h"

struct recorded {
	const char *name;
	size_t size, recorded;
};

#define ROW(s, n) { #s, sizeof(struct s), n },
static const struct recorded sizes[] = { IA_MAPS_LAYOUT_SIZES(ROW) };
#undef ROW
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

TEST(struct_sizes_recorded)
{
	size_t i;
	int bad = 0;

	ASSERT_LT(0u, IA_MAPS_LAYOUT);
	for (i = 0; i < NSIZES; i++) {
		if (sizes[i].size == sizes[i].recorded)
			continue;
		TH_LOG("struct %s is %zu bytes, recorded %zu for layout %u: bump "
		       "IA_MAPS_LAYOUT and record the new size (maps.h)", sizes[i].name,
		       sizes[i].size, sizes[i].recorded, IA_MAPS_LAYOUT);
		bad++;
	}
	ASSERT_EQ(0, bad);
}

/* 0 if type id of btf is no struct, or one recorded with its BTF size; else 1, logged. */
static int check_type(struct __test_metadata *_metadata, const struct btf *btf, __u32 id,
		      const char *map, const char *what)
{
	const struct btf_type *t;
	const char *name;
	size_t i;

	if (!id)
		return 0;
	id = btf__resolve_type(btf, id);
	t = btf__type_by_id(btf, id);
	if (!t || !btf_is_struct(t))
		return 0;
	name = btf__name_by_offset(btf, t->name_off);
	for (i = 0; i < NSIZES; i++)
		if (name && !strcmp(name, sizes[i].name))
			break;
	if (i == NSIZES) {
		TH_LOG("map %s's %s, struct %s, is not in IA_MAPS_LAYOUT_SIZES (maps.h)", map,
		       what, name ? name : "?");
		return 1;
	}
	if (btf__resolve_size(btf, id) != (long long)sizes[i].recorded) {
		TH_LOG("map %s's %s, struct %s, is %lld bytes in BPF, recorded %zu: bump "
		       "IA_MAPS_LAYOUT (maps.h)", map, what, name,
		       (long long)btf__resolve_size(btf, id), sizes[i].recorded);
		return 1;
	}
	return 0;
}

/* Every map of obj, and its inner map, keyed and valued by recorded structs only. */
static int check_obj(struct __test_metadata *_metadata, struct bpf_object *obj)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *m, *in;
	int bad = 0, n = 0;

	if (!btf)
		return -1;
	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);

		/* .bss, .rodata: the programs' own data, never pinned. */
		if (strncmp(name, "ia_", 3))
			continue;
		n++;
		bad += check_type(_metadata, btf, bpf_map__btf_key_type_id(m), name, "key");
		bad += check_type(_metadata, btf, bpf_map__btf_value_type_id(m), name, "value");
		in = bpf_map__inner_map(m);
		if (in) {
			bad += check_type(_metadata, btf, bpf_map__btf_key_type_id(in), name,
					  "inner key");
			bad += check_type(_metadata, btf, bpf_map__btf_value_type_id(in), name,
					  "inner value");
		}
	}
	return n ? bad : -1;
}

TEST(bpf_objects_agree)
{
	struct inagg *a = inagg__open();
	struct inagg_tail *t = inagg_tail__open();
	struct inagg_other *o = inagg_other__open();

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(0, check_obj(_metadata, a->obj));
	EXPECT_EQ(0, check_obj(_metadata, t->obj));
	EXPECT_EQ(0, check_obj(_metadata, o->obj));
	inagg__destroy(a);
	inagg_tail__destroy(t);
	inagg_other__destroy(o);
}

TEST_HARNESS_MAIN
