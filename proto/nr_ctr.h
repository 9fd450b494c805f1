/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counter sets (VPP foreach_*_error style): each set is declared once, as an
 * X-macro list of _(ENUM, "name") or _(ENUM, "name", "help") entries, and
 * these generate its enum, its names and its help texts:
 *   enum x_ctr { FOREACH_X(NR_CTR_ENUM) X_MAX };
 *   const char *const x_names[X_MAX] = { FOREACH_X(NR_CTR_NAME) };
 */
#ifndef NR_CTR_H
#define NR_CTR_H

#define NR_CTR_ENUM(e, n, ...) e,
#define NR_CTR_NAME(e, n, ...) [e] = n,
#define NR_CTR_HELP(e, n, d) [e] = d,

#endif /* NR_CTR_H */
