// SPDX-License-Identifier: GPL-2.0
/* inagg eval fig6: the paper's Fig. 6, word count and a parameter server (docs/apps.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "eval_fig6.h"

#define DEFAULT_CORPUS "build/corpus/Documentation"

struct fig6_args {
	struct ia_fig6_opts f;
	const char *corpus;
};

#define FIG6_OF(p) ((struct ia_fig6_opts *)((char *)(p) - offsetof(struct ia_fig6_opts, ks)))
#define FIG6_OFC(p) \
	((const struct ia_fig6_opts *)((const char *)(p) - offsetof(struct ia_fig6_opts, ks)))

static int parse_ks(const char *opt, const char *arg, void *dst)
{
	struct ia_fig6_opts *f = FIG6_OF(dst);

	return parse_list(opt, arg, f->ks, &f->nk);
}

static void show_ks(const void *dst, char *buf, size_t len)
{
	const struct ia_fig6_opts *f = FIG6_OFC(dst);

	buf[0] = '\0';
	for (int i = 0; i < f->nk; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%d", i ? "," : "", f->ks[i]);
}

static void fig6_init(void *args)
{
	struct fig6_args *a = args;

	ia_fig6_defaults(&a->f);
	a->corpus = DEFAULT_CORPUS;
}

static const struct opt fig6_opts[] = {
	OPT_INT('d', "depth", "D", struct fig6_args, f.depth, 0, 20, 0,
		"tree depth (2^(D+1)-1 switches)"),
	OPT_INT(0, "seeds", "N", struct fig6_args, f.seeds, 1, 1000000, 0, "trees per point"),
	OPT_INT('s', "seed", "S", struct fig6_args, f.seed, 0, OPT_NOMAX, 0, "first seed"),
	OPT_FUNC('k', "k", "LIST", struct fig6_args, f.ks, parse_ks, show_ks, 0,
		 "k values (budgets)"),
	OPT_STR(0, "corpus", "PATH", struct fig6_args, corpus, 0,
		"word count's text: a file, or a folder's *.rst, *.txt and *.md files "
		"(make corpus extracts the default)"),
	OPT_INT(0, "keys", "N", struct fig6_args, f.wc_keys, 1, 1 << 20, 0,
		"word ids per word-count message (1: one record each, the paper's)"),
	OPT_INT(0, "features", "N", struct fig6_args, f.ps_features, 1, 1 << 30, 0,
		"the parameter server's gradient length"),
	OPT_INT('C', "chunk", "E", struct fig6_args, f.ps_elems, 1, 1 << 20, 0,
		"gradient elements per message"),
	OPT_END
};

const struct opt_cmd eval_fig6_cmd = {
	.opts = fig6_opts,
	.init = fig6_init,
	.size = sizeof(struct fig6_args),
	.about =
	"The paper's Fig. 6: SMC's network congestion normalised to all-red against k\n"
	"for word count and a parameter server, on complete binary trees with constant\n"
	"rates and leaf loads uniform in [1,9] (mappers or workers), a mean over seeds\n"
	"with its standard deviation. Word count: mappers read equal splits of the\n"
	"corpus and emit one record per distinct word; a red switch forwards records,\n"
	"a blue one sends the distinct words of its subtree. Parameter server: dense\n"
	"gradient blocks; a blue switch sends one worker's worth. docs/apps.md says\n"
	"how SMC places for both.\n",
	.notes = "Reading the default corpus takes a few seconds; progress goes to stderr on a terminal.\n",
};

static void progress(void *arg, long done, long total)
{
	if (isatty(2))
		fprintf(stderr, "\rinagg eval fig6: tree %ld/%ld", done, total);
	if (isatty(2) && done == total)
		fprintf(stderr, "\r%40s\r", "");
}

static void print_curves(const struct ia_fig6_opts *o, double (*res)[IA_EVAL_NMETRIC])
{
	out_text("%9s", "k");
	for (int a = 0; a < IA_APP__COUNT; a++)
		out_text(" %9s %-8s", ia_app_name(a), "±sd");
	out_text("\n");
	out_arr_open("rows");
	for (int ki = 0; ki < o->nk; ki++) {
		out_obj_open(NULL);
		out_int("k", "%9lld", o->ks[ki]);
		for (int a = 0; a < IA_APP__COUNT; a++) {
			const double *row = res[ia_fig6_idx(o, a, ki, IA_FIG6_SMC)];
			char sd[32];

			snprintf(sd, sizeof(sd), "%s_sd", ia_app_name(a));
			out_double(ia_app_name(a), " %9.4f", row[IA_EVAL_VS_RED]);
			out_double(sd, " ±%-6.4f", row[IA_EVAL_SD(IA_EVAL_VS_RED)]);
		}
		out_text("\n");
		out_obj_close();
	}
	out_arr_close();
	/* All-blue does not depend on k: the floor of either curve. */
	out_obj_open("all_blue");
	out_text("%9s", "all-blue");
	for (int a = 0; a < IA_APP__COUNT; a++)
		out_double(ia_app_name(a), " %9.4f        ",
			   res[ia_fig6_idx(o, a, 0, IA_FIG6_ALL_BLUE)][IA_EVAL_VS_RED]);
	out_text("\n");
	out_obj_close();
	out_obj_open("all_red_congestion");
	out_text("all-red congestion (messages on the worst link, mean):");
	for (int a = 0; a < IA_APP__COUNT; a++) {
		out_text(" %s", ia_app_name(a));
		out_double(ia_app_name(a), " %.0f",
			   res[ia_fig6_idx(o, a, 0, IA_FIG6_ALL_RED)][IA_EVAL_ABS]);
	}
	out_text("\n");
	out_obj_close();
}

int cmd_eval_fig6(int argc, char **argv)
{
	static const char *const sfx[] = { ".rst", ".txt", ".md", NULL };
	double (*res)[IA_EVAL_NMETRIC] = NULL;
	struct ia_corpus c;
	struct fig6_args a;
	char err[IA_ERRLEN];
	double start = ia_now_seconds();
	int ret;

	opt_defaults(&eval_fig6_cmd, &a);
	if (opt_parse(&eval_fig6_cmd, argv[0], argc, argv, &a, NULL, NULL))
		return 1;
	ia_corpus_init(&c);
	ret = ia_corpus_add_path(&c, a.corpus, sfx, err, sizeof(err));
	if (ret) {
		if (!strcmp(a.corpus, DEFAULT_CORPUS) && ret == -ENOENT)
			return out_err("%s: no corpus at %s: run 'make corpus' or pass --corpus",
				       argv[0], a.corpus);
		return out_err("%s: %s", argv[0], err);
	}
	if (!c.nwords) {
		ia_corpus_free(&c);
		return out_err("%s: %s holds no words", argv[0], a.corpus);
	}
	a.f.corpus = &c;
	a.f.progress = progress;
	res = calloc((size_t)IA_APP__COUNT * a.f.nk * IA_FIG6_NCOL, sizeof(*res));
	ret = res ? ia_eval_fig6(&a.f, res) : -ENOMEM;
	if (ret) {
		out_err("%s: %s", argv[0], strerror(-ret));
		goto out;
	}
	out_begin();
	out_text("Fig. 6: SMC congestion / all-red vs k, constant rates, uniform loads\n");
	out_int("depth", "complete binary tree of depth %lld", a.f.depth);
	out_int("switches", " (%lld switches)", (2LL << a.f.depth) - 1);
	out_int("seeds", ", mean of %lld seeds", a.f.seeds);
	out_uint("seed", " from seed %llu\n", (unsigned long long)a.f.seed);
	out_obj_open("corpus");
	out_str("path", "word count: %s:", a.corpus);
	out_int("files", " %lld files,", c.files);
	out_uint("bytes", " %llu bytes,", (unsigned long long)c.bytes);
	out_uint("words", " %llu words,", (unsigned long long)c.nwords);
	out_uint("unique", " %llu unique", c.nvocab);
	out_uint("keys_per_message", "; %llu word ids per message\n", a.f.wc_keys);
	out_obj_close();
	out_obj_open("ps");
	out_uint("features", "parameter server: %llu features", a.f.ps_features);
	out_uint("elements_per_message", " in blocks of %llu elements\n", a.f.ps_elems);
	out_obj_close();
	print_curves(&a.f, res);
	out_double("seconds", NULL, ia_now_seconds() - start);
	ret = out_end();
out:
	free(res);
	ia_corpus_free(&c);
	return ret ? 1 : 0;
}
