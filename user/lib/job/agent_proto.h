/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The switch agent's protocol (docs/remote.md), spoken by the agent
 * (user/agent/) and by the controller (remote.h), which is why it is here.
 *
 * Protocol: one JSON object per line in, one per line out, in order.
 * Every request has "op" and may have "seq" (echoed). A reply has "ok";
 * a failure also "errno" (positive) and "error" (one line). Operations:
 *
 *   hello                      -> proto, switch, boot_id, epoch, backend,
 *                                 jobs (ids held), lost (ids a reboot lost)
 *   setup  jobs, slots         -> the ledger's limits, tail follows
 *   admit  job, class, slots   -> (idempotent: the same admission again is ok)
 *   release job                -> ENOENT if not held
 *   admitted job               -> admitted (bool)
 *   room   slots               -> room (bool)
 *   ports  ports: [{name, neigh?}], resolve? -> ports: [{name, ifindex, mac, peer?}]
 *                              (peer: neigh's MAC from the neighbour table;
 *                              resolve: asked of the network if not there)
 *   push   job, role (blue, red, tail), window, self_id, flags, members:
 *          [[id, nworkers]], sets? (tail: each member's set),
 *          up: {port, peer, saddr?, daddr?}, down: [{port, peer, daddr?}]
 *   unpush job                 -> ENOENT if not configured
 *   pushed job                 -> pushed (bool)
 *   counters job | port        -> counters: [IA_C__COUNT numbers]
 *   layout addrs: [[port, addr/len]], routes: [[dst, via, port]]
 *                              -> the ports addressed and routed (iproute2)
 *   state                      -> the agent's record (below)
 *   lend   job, count          -> head slots lent to the tail (the ledger's)
 *   reclaim job, count?        -> taken back (no count: all lent); count
 *   tail   slots, age_ns?, lend: [[job, count]] -> the tail pool and its
 *                                 directory published in the maps
 *   memory jobs: [ids], probes? -> heads: [{job, slots, open, done} | null],
 *                                 tail: {slots, lent, nlend, gen, age_ns,
 *                                 lends, reclaims, counters, live, stale}
 *
 * The record (state file) holds the boot id, an epoch that grows at each
 * start, and per job its admission and its last push request, written
 * (rename) before each reply that changed something. A restarted agent
 * knows its jobs; one that finds another boot id reports the jobs of the
 * old boot as lost (the ledger and maps did not survive) and forgets them.
 */
#ifndef INAGG_AGENT_PROTO_H
#define INAGG_AGENT_PROTO_H

#define IA_AGENT_PROTO 1
#define IA_AGENT_LINE_MAX (256 * 1024)

#endif
