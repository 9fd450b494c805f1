/* SPDX-License-Identifier: BSD-3-Clause */
/* The control API's "sw" backend over an in-process engine (nrz_backend.h). */
#include "nrz_backend.h"
#include "nrz_fuzz.h"

static int nb_job_add(struct nr_backend *b, uint32_t id, const struct nr_job_spec *spec,
		      uint32_t *credits, char *err, size_t errlen)
{
	struct nrz_backend *nb = b->priv;
	int rc = agg_engine_job_add(nb->eng, id, spec, nb->now, credits, err, errlen);

	if (!rc)
		nb->jobs++;
	return rc;
}

static int nb_job_del(struct nr_backend *b, uint32_t id)
{
	struct nrz_backend *nb = b->priv;
	int rc = agg_engine_job_del(nb->eng, id);

	if (!rc)
		nb->jobs--;
	return rc;
}

static int nb_job_stats(struct nr_backend *b, uint32_t id, struct nr_job_stats *st)
{
	struct nrz_backend *nb = b->priv;

	return agg_engine_job_stats(nb->eng, id, st);
}

static json_t *nb_stats(struct nr_backend *b)
{
	struct nrz_backend *nb = b->priv;
	uint64_t ctr[NR_ECTR_MAX];
	json_t *o = json_object();

	agg_engine_counters(nb->eng, ctr);
	for (unsigned k = 0; o && k < NR_ECTR_MAX; k++)
		json_object_set_new(o, nr_engine_ctr_names[k], json_integer((json_int_t)ctr[k]));
	return o;
}

static json_t *nb_info(struct nr_backend *b)
{
	struct nrz_backend *nb = b->priv;

	return json_pack("{s:s,s:i}", "kernel", agg_engine_kernel_name(nb->eng), "lcores", 1);
}

static const struct nr_backend_ops nrz_backend_ops = {
	.name = "sw", .job_create = nb_job_add, .job_destroy = nb_job_del,
	.job_status = nb_job_stats, .stats = nb_stats, .info = nb_info,
};

struct nr_backend *nrz_backend_new(struct nrz_backend *nb)
{
	struct nr_backend *b;

	nb->now = 1000000000ull;
	nb->jobs = 0;
	nb->eng = agg_engine_create(&(struct agg_engine_ops){ 0 });
	NRZ_CHECK(nb->eng != NULL, "engine");
	b = nr_backend_new(&nrz_backend_ops, nb);
	NRZ_CHECK(b != NULL, "sw backend");
	return b;
}
