// SPDX-License-Identifier: GPL-2.0
/*
 * Attach and detach as an operator relies on them: one program instance per
 * switch, shared by its ports and by every process that opens the switch;
 * an XDP program that is not inagg's survives attach and detach unless
 * forced; detach removes inagg's program in whatever mode it runs, fails when
 * there is none, and never creates a switch; errors say why in words.
 * Each test runs in its own network namespace with veth pairs a0/b0, a1/b1.
 */
#include <sched.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kselftest_harness.h"
#include "pinned.h"
#include "xdp.h"
#include "../nstest.h"
#include <net/if.h>

/* The reason of this process's last loader call: the caller's buffer (xdp.h). */
static char why[IA_XDP_ERRLEN];
#define WHY why, sizeof(why)

struct att {
	int a0, a1;
	char sw[64];
};

static int setup(struct att *t)
{
	if (unshare(CLONE_NEWNET))
		return -errno;
	if (sh("ip link add a0 type veth peer name b0 && ip link add a1 type veth peer name b1 && "
	       "ip link set a0 up && ip link set b0 up && ip link set a1 up && ip link set b1 up"))
		return -EIO;
	t->a0 = if_nametoindex("a0");
	t->a1 = if_nametoindex("a1");
	snprintf(t->sw, sizeof(t->sw), "ia-att-%d", getpid());
	return t->a0 && t->a1 ? 0 : -ENODEV;
}

/* Somebody else's XDP program: returns XDP_PASS, named like nothing of ours. */
static int foreign_prog(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_XDP, "fw_filter", "GPL", insns, 2, NULL);
}

static __u32 prog_id(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* The program attached in mode (XDP_FLAGS_DRV_MODE / XDP_FLAGS_SKB_MODE), or 0. */
static __u32 attached(int ifindex, __u32 mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return 0;
	return mode == XDP_FLAGS_SKB_MODE ? q.skb_prog_id : q.drv_prog_id;
}

FIXTURE(att) {
	struct att t;
};

FIXTURE_SETUP(att)
{
	ASSERT_EQ(0, setup(&self->t));
}

FIXTURE_TEARDOWN(att)
{
	ia_xdp_unpin(self->t.sw);
}

/* Every port and every opener of a switch share one instance of its program. */
TEST_F(att, one_instance_per_switch)
{
	struct ia_xdp *x, *y;
	__u32 id;

	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &x, WHY));
	ASSERT_EQ(0, ia_xdp_attach(x, self->t.a0, XDP_FLAGS_DRV_MODE, WHY));
	id = attached(self->t.a0, XDP_FLAGS_DRV_MODE);
	ASSERT_NE(0u, id);
	ASSERT_EQ(id, prog_id(ia_xdp_prog_fd(x)));
	/* A second process: the pinned program, not a new copy. */
	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &y, WHY));
	ASSERT_EQ(id, prog_id(ia_xdp_prog_fd(y)));
	ASSERT_EQ(0, ia_xdp_attach(y, self->t.a1, XDP_FLAGS_DRV_MODE, WHY));
	ASSERT_EQ(id, attached(self->t.a1, XDP_FLAGS_DRV_MODE));
	/* Attaching again changes nothing. */
	ASSERT_EQ(0, ia_xdp_attach(y, self->t.a0, XDP_FLAGS_DRV_MODE, WHY));
	ASSERT_EQ(id, attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	ASSERT_EQ(0, ia_xdp_detach(y, self->t.a0, 0, WHY));
	ASSERT_EQ(0, ia_xdp_detach(x, self->t.a1, 0, WHY));
	ASSERT_EQ(0u, attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	ASSERT_EQ(0u, attached(self->t.a1, XDP_FLAGS_DRV_MODE));
	ia_xdp_close(x);
	ia_xdp_close(y);
}

/* A foreign program survives attach and detach, on its port and beside it. */
TEST_F(att, foreign_program_survives)
{
	int fd = foreign_prog();
	struct ia_xdp *x;
	__u32 fid;

	ASSERT_LE(0, fd);
	fid = prog_id(fd);
	ASSERT_EQ(0, bpf_xdp_attach(self->t.a0, fd, XDP_FLAGS_DRV_MODE, NULL));
	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &x, WHY));

	ASSERT_EQ(-EBUSY, ia_xdp_attach(x, self->t.a0, XDP_FLAGS_DRV_MODE, WHY));
	ASSERT_NE(NULL, strstr(why, "fw_filter"));
	ASSERT_NE(NULL, strstr(why, "not inagg's"));
	ASSERT_EQ(fid, attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	/* Nor in the other mode, nor in the kernel's choice. */
	ASSERT_NE(0, ia_xdp_attach(x, self->t.a0, XDP_FLAGS_SKB_MODE, WHY));
	ASSERT_EQ(-EBUSY, ia_xdp_attach(x, self->t.a0, 0, WHY));
	ASSERT_EQ(fid, attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	ASSERT_EQ(0u, attached(self->t.a0, XDP_FLAGS_SKB_MODE));
	/* Its port is not counted as the switch's. */
	ASSERT_EQ(-ENOENT, ia_xdp_port_counters(x, self->t.a0, &(struct ia_counters){}));

	ASSERT_EQ(-EBUSY, ia_xdp_detach(x, self->t.a0, 0, WHY));
	ASSERT_NE(NULL, strstr(why, "fw_filter"));
	ASSERT_EQ(fid, attached(self->t.a0, XDP_FLAGS_DRV_MODE));

	/* inagg beside it, on the other port, attached and detached. */
	ASSERT_EQ(0, ia_xdp_attach(x, self->t.a1, XDP_FLAGS_DRV_MODE, WHY));
	ASSERT_EQ(0, ia_xdp_detach(x, self->t.a1, 0, WHY));
	ASSERT_EQ(fid, attached(self->t.a0, XDP_FLAGS_DRV_MODE));

	/* Only --force replaces it, and then detach removes inagg's. */
	ASSERT_EQ(0, ia_xdp_attach(x, self->t.a0, XDP_FLAGS_DRV_MODE | IA_XDP_F_FORCE, WHY));
	ASSERT_EQ(prog_id(ia_xdp_prog_fd(x)), attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	ASSERT_EQ(0, ia_xdp_detach(x, self->t.a0, 0, WHY));
	ASSERT_EQ(0u, attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	/* ... and --force removes a foreign one on detach. */
	ASSERT_EQ(0, bpf_xdp_attach(self->t.a0, fd, XDP_FLAGS_SKB_MODE, NULL));
	ASSERT_EQ(0, ia_xdp_detach(x, self->t.a0, IA_XDP_F_FORCE, WHY));
	ASSERT_EQ(0u, attached(self->t.a0, XDP_FLAGS_SKB_MODE));
	ia_xdp_close(x);
	close(fd);
}

/* Detach without a mode removes inagg's program in generic mode too; attach works again. */
TEST_F(att, detach_any_mode)
{
	struct ia_xdp *x;

	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &x, WHY));
	ASSERT_EQ(0, ia_xdp_attach(x, self->t.a0, XDP_FLAGS_SKB_MODE, WHY));
	ASSERT_NE(0u, attached(self->t.a0, XDP_FLAGS_SKB_MODE));
	/* Native while generic is attached: refused, saying why. */
	ASSERT_EQ(-EEXIST, ia_xdp_attach(x, self->t.a0, XDP_FLAGS_DRV_MODE, WHY));
	ASSERT_NE(NULL, strstr(why, "generic mode"));
	/* Without a mode: the mode it runs in. */
	ASSERT_EQ(0, ia_xdp_attach(x, self->t.a0, 0, WHY));
	ASSERT_EQ(0u, attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	ASSERT_EQ(0, ia_xdp_detach(x, self->t.a0, 0, WHY));
	ASSERT_EQ(0u, attached(self->t.a0, XDP_FLAGS_SKB_MODE));
	ASSERT_EQ(0, ia_xdp_attach(x, self->t.a0, XDP_FLAGS_DRV_MODE, WHY));
	ASSERT_NE(0u, attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	/* A mode it does not run in: nothing of inagg's there. */
	ASSERT_EQ(-ENOENT, ia_xdp_detach(x, self->t.a0, XDP_FLAGS_SKB_MODE, WHY));
	ASSERT_NE(0u, attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	ASSERT_EQ(0, ia_xdp_detach(x, self->t.a0, XDP_FLAGS_DRV_MODE, WHY));
	ia_xdp_close(x);
}

/* Nothing attached: detach fails, saying so. */
TEST_F(att, detach_nothing)
{
	struct ia_xdp *x;

	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &x, WHY));
	ASSERT_EQ(-ENOENT, ia_xdp_detach(x, self->t.a0, 0, WHY));
	ASSERT_NE(NULL, strstr(why, "no inagg program attached"));
	ASSERT_EQ(0, ia_xdp_attach(x, self->t.a0, 0, WHY));
	ASSERT_EQ(0, ia_xdp_detach(x, self->t.a0, 0, WHY));
	ASSERT_EQ(-ENOENT, ia_xdp_detach(x, self->t.a0, 0, WHY));
	ia_xdp_close(x);
}

/* Another switch's program is not this switch's to replace or remove. */
TEST_F(att, other_switch)
{
	struct ia_xdp *x, *y;
	char other[80];
	__u32 id;

	snprintf(other, sizeof(other), "%s-b", self->t.sw);
	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &x, WHY));
	ASSERT_EQ(0, ia_xdp_open(other, &y, WHY));
	ASSERT_EQ(0, ia_xdp_attach(x, self->t.a0, 0, WHY));
	id = attached(self->t.a0, XDP_FLAGS_DRV_MODE);
	ASSERT_EQ(-EBUSY, ia_xdp_attach(y, self->t.a0, 0, WHY));
	ASSERT_NE(NULL, strstr(why, "another inagg switch"));
	ASSERT_EQ(-EBUSY, ia_xdp_detach(y, self->t.a0, 0, WHY));
	ASSERT_EQ(id, attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	ASSERT_EQ(0, ia_xdp_detach(x, self->t.a0, 0, WHY));
	ia_xdp_close(x);
	ia_xdp_close(y);
	ia_xdp_unpin(other);
}

/* A switch that was never set up is not created by looking at it. */
TEST_F(att, unknown_switch_not_created)
{
	char path[128];
	struct ia_xdp *x;

	snprintf(path, sizeof(path), IA_BPFFS_ROOT "/%s", self->t.sw);
	ASSERT_EQ(-ENOENT, ia_xdp_open_existing(self->t.sw, &x, WHY));
	ASSERT_NE(NULL, strstr(why, "not set up here"));
	ASSERT_NE(0, access(path, F_OK));
	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &x, WHY));
	ia_xdp_close(x);
	ASSERT_EQ(0, ia_xdp_open_existing(self->t.sw, &x, WHY));
	ia_xdp_close(x);
}

/* Pins dir/ia_layout as the loader makes it, recording layout; 0 or -errno. */
static int pin_layout(const char *dir, __u32 layout)
{
	char path[160];
	__u32 key = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/ia_layout", dir);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ia_layout", 4, 4, 1, NULL);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(fd, &key, &layout, BPF_ANY) || bpf_obj_pin(fd, path))
		err = -errno;
	close(fd);
	return err;
}

/* The layout a pin set records; 0 if it has none. */
static __u32 pinned_layout(const char *dir)
{
	char path[160];
	__u32 key = 0, val = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/ia_layout", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	bpf_map_lookup_elem(fd, &key, &val);
	close(fd);
	return val;
}

/*
 * A new pin set records this build's IA_MAPS_LAYOUT, frozen, and is opened
 * again; the last detach's unpin removes ia_layout with the rest.
 */
TEST_F(att, layout_recorded_and_accepted)
{
	char dir[128], path[160];
	__u32 key = 0, val = 7;
	struct ia_xdp *x, *y;
	int fd;

	snprintf(dir, sizeof(dir), IA_BPFFS_ROOT "/%s", self->t.sw);
	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &x, WHY));
	ASSERT_EQ(IA_MAPS_LAYOUT, pinned_layout(dir));
	snprintf(path, sizeof(path), "%s/ia_layout", dir);
	fd = bpf_obj_get(path);
	ASSERT_LE(0, fd);
	ASSERT_NE(0, bpf_map_update_elem(fd, &key, &val, BPF_ANY));	/* frozen */
	close(fd);
	ASSERT_EQ(0, ia_xdp_attach(x, self->t.a0, 0, WHY));
	ASSERT_EQ(0, ia_xdp_open_existing(self->t.sw, &y, WHY)) TH_LOG("%s", why);
	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &y, WHY)) TH_LOG("%s", why);
	ASSERT_EQ(0, ia_pinned_layout(self->t.sw));
	ASSERT_EQ(0, ia_xdp_detach(y, self->t.a0, 0, WHY));
	ia_xdp_close(x);
	ia_xdp_close(y);
	ASSERT_EQ(0, ia_xdp_unpin(self->t.sw));
	ASSERT_NE(0, access(dir, F_OK));
}

/*
 * An upgrade: the running program's pins carry another layout. Opening them
 * is refused, saying what to do, and nothing is pinned among them; the
 * program is detached by its pins alone; then the switch starts anew.
 */
TEST_F(att, layout_other_refused)
{
	char dir[128], path[160];
	struct ia_xdp *x, *y = NULL;
	struct ia_pinned_job *jobs;
	size_t n;
	__u32 id;

	snprintf(dir, sizeof(dir), IA_BPFFS_ROOT "/%s", self->t.sw);
	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &x, WHY));
	ASSERT_EQ(0, ia_xdp_attach(x, self->t.a0, 0, WHY));
	id = attached(self->t.a0, XDP_FLAGS_DRV_MODE);
	ia_xdp_close(x);
	/* As if another version had pinned them. */
	snprintf(path, sizeof(path), "%s/ia_layout", dir);
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, pin_layout(dir, IA_MAPS_LAYOUT + 1));

	ASSERT_EQ(-ESTALE, ia_xdp_open(self->t.sw, &y, WHY));
	ASSERT_NE(NULL, strstr(why, "map layout")) TH_LOG("%s", why);
	ASSERT_NE(NULL, strstr(why, "inagg-attach@")) TH_LOG("%s", why);
	ASSERT_NE(NULL, strstr(why, "detach")) TH_LOG("%s", why);
	ASSERT_EQ(NULL, y);
	ASSERT_EQ(-ESTALE, ia_xdp_open_existing(self->t.sw, &y, WHY));
	ASSERT_EQ(IA_MAPS_LAYOUT + 1, pinned_layout(dir));
	/* Its readers refuse it too. */
	ASSERT_EQ(-ESTALE, ia_pinned_layout(self->t.sw));
	ASSERT_EQ(-ESTALE, ia_pinned_jobs(self->t.sw, &jobs, &n));
	ASSERT_EQ(-ESTALE, ia_pinned_port_counters(self->t.sw, self->t.a0,
						   &(struct ia_counters){}));

	/* A name pinned nothing: nothing detached. The switch's program: by its pins. */
	ASSERT_EQ(-ENOENT, ia_xdp_detach_pinned("ia-no-such-sw", self->t.a0, 0, WHY));
	ASSERT_NE(NULL, strstr(why, "not set up here")) TH_LOG("%s", why);
	ASSERT_EQ(id, attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	ASSERT_EQ(0, ia_xdp_detach_pinned(self->t.sw, self->t.a0, 0, WHY)) TH_LOG("%s", why);
	ASSERT_EQ(0u, attached(self->t.a0, XDP_FLAGS_DRV_MODE));
	ASSERT_EQ(-ENOENT, ia_xdp_detach_pinned(self->t.sw, self->t.a0, 0, WHY));
	ASSERT_EQ(0, ia_xdp_unpin(self->t.sw));

	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &x, WHY)) TH_LOG("%s", why);
	ASSERT_EQ(IA_MAPS_LAYOUT, pinned_layout(dir));
	ia_xdp_close(x);
}

/* Pins of an older package, which had no ia_layout: refused likewise; an empty folder is not. */
TEST_F(att, layout_missing_refused)
{
	char dir[128], path[160];
	struct ia_xdp *x, *y = NULL;

	snprintf(dir, sizeof(dir), IA_BPFFS_ROOT "/%s", self->t.sw);
	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &x, WHY));
	ia_xdp_close(x);
	snprintf(path, sizeof(path), "%s/ia_layout", dir);
	ASSERT_EQ(0, unlink(path));

	ASSERT_EQ(-ESTALE, ia_xdp_open(self->t.sw, &y, WHY));
	ASSERT_NE(NULL, strstr(why, "older inagg")) TH_LOG("%s", why);
	ASSERT_NE(NULL, strstr(why, "inagg-attach@")) TH_LOG("%s", why);
	ASSERT_EQ(NULL, y);
	ASSERT_NE(0, access(path, F_OK));	/* not made up for it */
	ASSERT_EQ(-ESTALE, ia_pinned_layout(self->t.sw));
	ASSERT_EQ(0, ia_xdp_unpin(self->t.sw));

	/* A folder left empty is a new set. */
	ASSERT_EQ(0, mkdir(dir, 0700));
	ASSERT_EQ(0, ia_xdp_open(self->t.sw, &x, WHY)) TH_LOG("%s", why);
	ASSERT_EQ(IA_MAPS_LAYOUT, pinned_layout(dir));
	ia_xdp_close(x);
}

/* A failed load says what libbpf said, though libbpf's messages are silent. */
TEST_F(att, load_error_says_why)
{
	char dir[128], path[160];
	struct ia_xdp *x;
	int fd, err;

	/* As programs do: libbpf's messages through the loader's hook, printed nowhere. */
	libbpf_set_print(ia_xdp_libbpf_print);
	ia_xdp_print_to(NULL);
	snprintf(dir, sizeof(dir), IA_BPFFS_ROOT "/%s", self->t.sw);
	snprintf(path, sizeof(path), "%s/ia_jobs", dir);
	mkdir(IA_BPFFS_ROOT, 0700);
	ASSERT_EQ(0, mkdir(dir, 0700));
	/* This layout's set, so that the load itself fails. */
	ASSERT_EQ(0, pin_layout(dir, IA_MAPS_LAYOUT));
	/* Not the hash the datapath expects there. */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ia_jobs", 4, 4, 1, NULL);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bpf_obj_pin(fd, path));
	close(fd);
	err = ia_xdp_open(self->t.sw, &x, WHY);
	ASSERT_GT(0, err);
	ASSERT_NE(NULL, strstr(why, "libbpf said")) TH_LOG("%s", why);
	ASSERT_NE(NULL, strstr(why, path)) TH_LOG("%s", why);
}

/* The kernel's own error codes in words. */
TEST(strerror_enotsupp)
{
	ASSERT_NE(NULL, strstr(ia_xdp_errname(-524), "not supported by this kernel"));
	ASSERT_NE(NULL, strstr(ia_xdp_errname(-ENOENT), "No such file"));
}

/*
 * The reason is the failed call's own: a later failure with the same errno
 * and nothing more to say gets the errno's words, not the earlier reason
 * (a thread-local last error gave the stale one).
 */
TEST(reason_is_the_calls_own)
{
	struct ia_xdp *x = NULL;

	ASSERT_EQ(-EINVAL, ia_xdp_open("no/such", &x, WHY));
	ASSERT_NE(NULL, strstr(why, "invalid switch name")) TH_LOG("%s", why);
	ASSERT_EQ(-EINVAL, ia_xdp_open_existing(NULL, &x, WHY));
	ASSERT_STREQ(strerror(EINVAL), why);
	/* No buffer: the errno alone. */
	ASSERT_EQ(-EINVAL, ia_xdp_open("no/such", &x, NULL, 0));
}

TEST_HARNESS_MAIN
