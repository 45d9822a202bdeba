"""The fast step (``--step fast``, the default): tempanon's own heuristic for the broader step problem.

Not in the paper (Wang, Xu, Wong, Fu, ICDM 2010): it solves the same step problem as the exact step
(:mod:`tempanon.stream.reposition`: every pending placement may change, suppressed records of a home
before the window may be recycled when Theorem 1 allows, suppressions that a later step can still
recycle priced by ``defer``) but by a local search without a proof of optimality, compiled with numba
so that a step costs microseconds instead of milliseconds (issue 14).

One step ``t`` over the pending snapshots ``D'[oldest..t]`` (records, not counts):

1. **Start**: the previous window as it was (l-eligible) and the initial solution of ``D[t]`` (Section
   IV: its most frequent value suppressed until l-eligible), applied by the publisher.
2. **Bound**: every record at its cheapest option (eligibility ignored) is a lower bound; a state that
   reaches it is optimal and the step stops (certificate ``lower bound``).
3. **Local search**, until no move improves (every applied move lowers the IL strictly, so it ends):

   * *single moves* (the paper's LP-Repositions, Section V.A), best first: one record to another option
     (a pending snapshot in its reach, or suppression) with both touched snapshots still l-eligible;
   * when none improves, the best *swap* (``SWAPS``, off by default: :data:`MOVES`): two records of the
     same value exchange places (one of them may be suppressed); the counts do not change, so every
     snapshot stays l-eligible;
   * when none improves, the best *emptying* of a pending snapshot (``EMPTY``): each of its records,
     in input order, to its best other option (a pending snapshot that stays l-eligible, or
     suppression; an empty snapshot is l-eligible: Definition 1);
   * when none improves, the best *lift* (Figure 4's level lift, generalized to every pending
     snapshot): raise snapshot ``p``'s largest value count to ``K`` (1 .. :data:`LIFT_LEVELS` above the
     current one) by pulling in the records that gain most (un-suppressing, recycling, moving from other
     snapshots), best gain first (ties: the value most frequent in its source first), at most ``K`` per
     value, until ``|D'[p]| >= l K``. Two variants: every source must stay l-eligible at each record
     taken (*strict*); or sources may break on the way (emptying a snapshot into a later one) and are
     repaired at the end (a record taken from suppression is exchanged for one of the same value placed
     in the broken source), and sources still broken are then made l-eligible by *shedding* (``SHED``:
     records of the source's largest value leave one at a time, each to its best option that stays
     l-eligible or suppression, the cheapest loss first: the "send the others home" half of an
     ejection chain; without ``SHED``, as before 2026-11-25 evening, they are *drained*: each of their
     records to its best other option); every touched snapshot is then checked. The second variant is
     skipped when the strict one passed over no record (it would take the same records). The best lift
     over ``p``, ``K`` and the variants is applied when it gains. Pruning (heuristic: gains of drains and sheds ignored): a snapshot whose candidates'
     positive gains cannot beat the best lift so far is skipped, and so is a level ``K`` whose best
     filling selection (``LIFT_BOUND``: every positive gain within the caps of ``K`` per value, then the
     least negative ones until ``|D'[p]| >= l K``, sources' eligibility ignored) cannot;
   * when neither improves, *repaired pairs* (``PAIRS``, **off by default** since 2026-11-25 night: LL-Reposition +
     repair, relays included), best first: a move that gains but breaks one or two snapshots, with the
     second move entering or leaving a broken snapshot that makes every snapshot l-eligible again. Its
     work is bounded (:data:`PAIR_BUDGET` first-move x repair candidates per scan, the same in every
     run); with the flow polish and the level transfers after it, it changed the IL of daily use-of-force
     by -0.02% to +0.23% and cost x1.1-2.2 of the step rate (docs/benchmarks.md);
   * when nothing of the above improves, the *flow polish* (``FLOW``, since 2026-11-25 night): with
     every snapshot's level ``M[p]`` kept as a cap, the rest of the step problem is a min-cost flow (the
     exact step's cap form, docs/stream.md); negative cycles of its residual network are cancelled from
     the current placements (:func:`_fastkernel.cancel_cycles`: Bellman-Ford on slots ``(p, value)``,
     records as arcs, violations priced by a large penalty), so any chain of moves that keeps the levels
     is found, not only the pairs above. The result is optimal for those levels (tested against an ILP
     with fixed caps; a violation is priced at one more than the dearest placement's IL, ``PENALTY_BOUND``,
     so that the cancelling never stops on a cycle of rounding) and the search ends with it (going on with more rounds from it gained at most 0.03%
     IL on daily use-of-force at 10-30% more step CPU: the extra rounds are mostly failing lift scans);
   * then, for ``w >= XFER_MIN_W``, *level transfers* (``XFER``): the levels as caps with one pending
     snapshot one level higher and another one lower (a neighbour, or up to ``w // XFER_REACH_PER_W``
     snapshots away), each candidate solved as the min-cost flow for
     its caps (the same cycle cancelling, from the current placements), the best improving one applied
     until none improves. The step optimum often changes the levels of two or more snapshots at once
     (docs/benchmarks.md, "Why the fast step is above the exact step"), which no move above does. A
     candidate is solved only when a *dual bound* says it can beat the best one so far (``XFER_BOUND``):
     the Bellman-Ford distances of the flow for the current levels are a feasible dual of the flow for
     any caps, so by weak duality a cap change gains at most a linear function of the changes
     (:func:`_fastkernel.cap_gradient`; two such duals, the smaller bound kept). Same placements as
     without the bound (tested), about half of the candidates' flows saved.

**Ties** (:data:`TIE`, integer costs): the search prices a delay ``d`` at ``mu(d)`` plus a perturbation
so small that all records' perturbations together stay below 1/2, growing with ``mu(d)^2``: among
placements of equal IL it keeps the one with evenly spread delays, and it never ranks a placement of
higher IL first. Linear ``mu`` has many such ties and the one kept changes the stream's later steps
(docs/benchmarks.md). Certificates and gaps are computed with the true costs.

4. **Timestamp order** (Theorem 1): per value, the earliest records (by home, then input order) take the
   earliest places, and inside a (home, value) group the earliest records are the ones placed (the swap
   of Theorem 1's proof: counts per snapshot and value unchanged, reach kept, IL never higher).

Every release is still verified independently (l-diversity, Theorem 1) before it is written. The
kernel runs a whole batch of steps in one call (:meth:`StreamPublisher.push_coded_many`) or one step
(:meth:`StreamPublisher.push`), with identical results. numba is imported only when this step runs;
without numba the same functions run as plain Python (correct, slow).
"""

from __future__ import annotations

import time as _time

import numpy as np

METHOD_INITIAL, METHOD_FAST = 0, 1  # the kernel's method codes
CERTIFICATES = {1: "fewer than l values", 2: "lower bound", 3: "lower bound"}
"""Certificate names of the kernel's codes (``IL 0`` steps and bound-reaching steps are both proven by
the bound "every record at its cheapest option")."""

JIT_COMPILE_CPU_SECONDS = 0.0
"""CPU time spent compiling the kernel (or loading it from numba's cache) in this process; never part
of a step's time (``step_cpu_seconds``); reported as ``jit_compile_cpu_seconds`` in the summary."""

MAX_ROUNDS = 10_000  # a safety cap on the local search's rounds per step (every applied move lowers the IL)

PAIR_BUDGET = 200
"""Work bound of one scan of repaired pairs (``PAIRS``, off by default; first moves x candidate repairs
examined): bounded, it stays deterministic."""

LIFT_LEVELS = 6
"""A lift raises a snapshot's largest value count by 1 .. LIFT_LEVELS."""

SWAPS, EMPTY, SHED, LIFT_BOUND, FLOW, XFER, XFER_BOUND, PAIRS, XFER_HALL, XFER_HALL_CHECK = 1, 2, 4, 8, 16, 32, 64, 128, 256, 512
WHOLE_GAINS = 1024
PENALTY_BOUND = 2048
XFER_ORDER = 4096
XFER_START = 8192
LIFT_ORDER = 16384
DUAL_REUSE = 32768
NET_REUSE = 131072
XFER_DUALS = 262144
DUAL_POOL = 524288
EMPTY_BOUND = 4194304
GROUPS = 8388608
ALL_MOVES = (SWAPS | EMPTY | SHED | LIFT_BOUND | FLOW | XFER | XFER_BOUND | PAIRS | XFER_HALL | WHOLE_GAINS | PENALTY_BOUND | XFER_ORDER | XFER_START
             | LIFT_ORDER | DUAL_REUSE | NET_REUSE | XFER_DUALS | DUAL_POOL | EMPTY_BOUND | GROUPS)
MOVES = (EMPTY | SHED | LIFT_BOUND | FLOW | XFER | XFER_BOUND | XFER_HALL | WHOLE_GAINS | PENALTY_BOUND | XFER_ORDER | XFER_START | LIFT_ORDER
         | DUAL_REUSE | NET_REUSE | XFER_DUALS | DUAL_POOL | EMPTY_BOUND | GROUPS)
"""The local search's optional parts (bits; switched off only to measure what each one does, and in
the tests that show a case each is needed for): ``SWAPS`` two records of one value exchange places
(**off by default**: its scan is quadratic in the records of a value, and on the stops stream, daily,
``l = 5``, ``w = 2``, it took the step from 0.27 to 3.7 CPU-s and raised the IL from 162,207 to 162,825;
on daily use-of-force it changed the IL by -0.6% to +0.1%); ``PAIRS`` the scan of repaired pairs (**off
by default** since 2026-11-25 night: after the flow polish and the level transfers it changed the IL by -0.02%
to +0.23% on daily use-of-force at x1.1-2.2 of the step rate); ``EMPTY`` a snapshot emptied into its records' best other options; ``SHED`` the lift
variant that repairs a broken source by moving out records of its largest value; ``LIFT_BOUND`` a lift
to level ``K`` is tried only when the best selection that fills ``p`` to ``l K`` could beat the best lift
so far (:func:`_fastkernel.fill_bound`); ``FLOW`` when nothing else improves, the min-cost flow for the
current levels (:func:`_fastkernel.flow_polish`); ``XFER`` then level transfers between neighbouring
snapshots (or up to :data:`XFER_REACH_PER_W` apart), a flow per candidate (:func:`_fastkernel.xfer_search`), only for windows of at least
:data:`XFER_MIN_W` and steps of at most ``_fastkernel.XFER_MAX_ACTIVE`` active records (any number
when ``w <= _fastkernel.XFER_ANY_SIZE_MAX_W``);
``XFER_BOUND`` a level-transfer candidate is solved only when a dual bound of the flow for the current
levels says it can beat the best candidate so far (:func:`_fastkernel.cap_gradient`; the same results
as without it, fewer flows); ``XFER_HALL`` a level-transfer candidate whose caps a cut proves that no
placement meets (:func:`_fastkernel.caps_infeasible`: Hall's condition on runs of snapshots) is not
solved: its flow would end with a penalty and be rejected, so the results are the same, with fewer
flows (daily use-of-force, 2026-11-26: 83-98% of the infeasible candidates caught, step rate x0.98-1.27
at ``w >= 4``; docs/benchmarks.md); ``XFER_HALL_CHECK`` (tests only) solves those candidates anyway and
counts any whose flow is accepted (``STATS[40]``, never); ``WHOLE_GAINS`` (since 2026-11-26 afternoon)
with whole-number costs (integral ``mu`` and ``beta``: every placement's IL is a whole number), a lift
or a level transfer is applied only when it lowers the true IL, not only the ties' perturbation (a
search gain above 0.5, :data:`TIE`), and the dual bound skips a transfer candidate that cannot gain
that much: those two searches are the costly ones, and moves that only re-spread equal-IL delays are
left to the single moves, the emptyings and the flow polish. Measured on daily use-of-force
(docs/benchmarks.md, "Fast step: lifts and transfers only for whole gains"): step rate x0.92-1.80
(x1.2-1.8 at ``l = 2``, ``w >= 4``; x0.92-1.07 at ``w = 1``, noise), total IL -0.2% to +0.2%. Without whole-number costs (or with ``TIE = 0``, where every gain is whole) it
changes nothing. ``PENALTY_BOUND`` (since 2026-11-26 evening) prices a violated cap or size bound in
the flows (:func:`_fastkernel.cancel_cycles`) at one more than the dearest placement's IL
(:func:`_fastkernel.penalty`) instead of ``1e7``: any penalty that large makes the penalized optimum
a placement without violation where one exists, and distances of that size stay exact well below the
search's tolerance; at ``1e7`` (one unit in the last place: 1.9e-9, above the tolerance 1e-9)
Bellman-Ford found "cycles" made of rounding only, and the cancelling stopped there without its proof
that the flow is optimal (``STATS[42]``: on daily use-of-force 3-125 times per run at ``w >= 4``, e.g.
125 at linear ``l = 5``, ``w = 8``; with the bound never). Measured side by side (2026-11-26 17:03, load
~1-2): the same IL in 14 of the 16 ``w in {4, 8}`` cells, linear ``l = 5``: ``w = 4`` 23,189 -> 23,193,
``w = 8`` 18,306 -> 18,303; step rate within noise (x0.95-1.05).

``XFER_START`` (since 2026-11-26 evening): a level-transfer candidate's flow starts from greedy moves
toward its caps (:func:`_fastkernel.xfer_start`: ``q``'s values above their new cap send their cheapest
records out, then ``p`` takes the records that gain most until it is large enough) instead of from the
current placements. The cycle cancelling reaches an optimum for the caps from any start (tested
against the fixed-cap ILP), so only ties between equal-IL flows can change; each cycle it saves is a
Bellman-Ford run over every arc: at ``l = 10``, ``w = 8`` a candidate took 19 runs before and 3.5 after
(daily use-of-force). ``XFER_ORDER``: a round's candidates are solved in decreasing order of their
dual bound (ties in index order, and among equal ILs the first in index order kept, as before), so the
first whose bound cannot beat the best so far ends the round: the same placements, 1-7% fewer flows.
Measured side by side on the 24 daily use-of-force cells with ``w in {2, 4, 8}`` (2026-11-26 17:20,
load ~2; docs/benchmarks.md, "Fast step: a greedy start for each transfer's flow"): step rate x1.03-1.74
(``w = 8`` x1.19-1.74), IL -0.05% to +0.22%.

``LIFT_ORDER`` (since 2026-11-26 evening): a lift scan visits the pending snapshots in decreasing order
of their bound (the sum of their candidates' positive gains; ties in index order) and stops at the
first that cannot beat the best lift so far; among lifts of equal gain the first in ``(p, K,
variant)`` order is kept, as in index order. The newest snapshot, where most lifts are applied, is
usually first, so fewer lifts are tried (daily use-of-force: 10-20% fewer at ``w in {4, 8}``), the same
IL in all 24 cells ``l in {2, 3, 5, 10}``, ``w in {2, 4, 8}`` measured (quadratic) and the 6 linear ones
(``l in {3, 5, 10}``, ``w in {4, 8}``), step rate x0.97-1.08.

``DUAL_REUSE`` (since 2026-11-26 evening): the first transfer round's forward dual (``cap_gradient``,
a Bellman-Ford run from zero labels) is taken from the flow polish's last Bellman-Ford run, which ran
on the same network (same placements, caps the levels) and converged
(:func:`_fastkernel.dual_gradient`): the same distances, so the same placements (tested); daily
use-of-force, 16 cells ``w in {4, 8}``: step rate x1.02-1.07, IL identical.

``NET_REUSE`` (since 2026-11-26 night): a transfer round's residual network is built once (or
taken from the duals' runs) and each candidate patches it (the arcs of the records its greedy start
moved, the slots' arcs for its caps) and rewrites it back, instead of a new build per candidate (the
builds were 6-16% of the step): the same arcs in the same order (tested arc for arc), so the same
placements; x1.05-1.10 at ``w = 8``. ``XFER_DUALS``: when a candidate's flow ends with a converged
Bellman-Ford run, its distances are a dual of every cap vector too, so with its penalized IL ``f``
(each violated unit at the flows' penalty) a later candidate of the round with caps ``k''`` gains at most
``IL - f + sum (k'' - k) G`` (:func:`_fastkernel.dual_gradient`; tested against the fixed-cap ILP, also
from infeasible caps): candidates that cannot beat the best one are skipped (``STATS[45]``), the same
placements with 27-38% fewer candidates solved, x1.08-1.16 at ``w = 8`` (daily use-of-force,
docs/benchmarks.md, "Fast step: one network per transfer round, the duals of solved candidates").
``DUAL_POOL``: every dual of a step (each round's two, each solved candidate's but a round's last) is kept (up to ``_fastkernel.POOL``), and every later round's candidates are bounded by
all of them, not only by their own round's (each is a dual of the same step problem, valid for every
cap vector with its caps and penalized IL); the candidates are then ordered by that bound: the same
placements, 2-18% fewer candidates solved, x1.0-1.07 at ``w = 8``. ``EMPTY_BOUND``: a pending
snapshot is not emptied on trial when even every record of it at its cheapest other option (eligibility ignored)
could not beat the best emptying so far (:func:`_fastkernel.empty_bound`): the same placements; the
emptyings' scan was 4-10% of the step and applies one in fewer than 1.5% of the steps (daily
use-of-force, 0-30 in 2,070); x1.06-1.08 at ``l = 2``, ``w in {4, 8}``, x0.98-1.10 elsewhere.

``GROUPS`` (since 2026-11-27): records of the same value, home and price (so the same reach) that sit
in the same place have the same options at the same prices (by Theorem 1, Section IV, records of one
value differ only by their timestamps, which the step's end puts in order); a lift's candidates
(:func:`_fastkernel.fill_candidates`) are then one entry per (group, place) with its number of copies, so
the sort, the lift's fill (up to that many copies within the caps, as LL-Reposition picks records under
the per-value maximum ``m(s_i)``, Section V.A, Example 3) and :func:`_fastkernel.fill_bound` work on
groups. Among candidates of equal key the copies now come together (before: in input order, another
group's record between them), so the search may take another path. Daily use-of-force, all 32 cells
``l in {2, 3, 5, 10}``, ``w in {1, 2, 4, 8}`` side by side with main (docs/benchmarks.md, 2026-11-27
"the lifts' candidates on groups of alike records"): IL within 2% of the exact step in every cell (worst quadratic
``l = 3``, ``w = 8``: 1.0199, as main), step rate x1.06-1.09 at ``w = 8``, ``l >= 3`` (x1.03-1.09 over three
runs; x0.98-1.08 elsewhere); still 36,623-70,753 step records per CPU-second in those six cells."""

TIE = 1.0
"""Ties between placements of equal IL (integer costs only; 0 switches it off): the search prices a
delay ``d`` at ``mu(d) + TIE * eps * (mu(d) / mu(w))^2`` (:func:`_fastkernel.tie_costs`; all records'
perturbations together below 1/2, so a placement of lower IL always ranks first): among equal-IL
placements it prefers evenly spread delays. Measured on daily use-of-force (docs/benchmarks.md, 2026-11-25
night): linear ``mu`` has many ties (a record delayed 2 = two records delayed 1) and which one the search
keeps changes the stream's IL by several percent (``l = 2``, ``w = 2``: 3,537 -> 3,394; the exact step
3,397)."""

XFER_MIN_W = 2
"""Level transfers (``XFER``) run only when ``w >= XFER_MIN_W`` (``w = 1`` is within 2% of the exact step
without them; with them, 2026-11-25 23:59, the eight ``w = 1`` cells changed by -0.1% to +0.04% IL at
x0.78-0.82 of the step rate). Measured on daily use-of-force (docs/benchmarks.md): at ``w = 4`` they bring every cell
within 2% of the exact step (2026-11-25 night: IL / exact 1.007-1.014, before up to 1.038); from
2026-11-25 23:25, with the dual bound (``XFER_BOUND``) and without the pair scan, also at ``w = 2``: every
``w = 2`` cell within 1% (0.997-1.010, before up to 1.021) at 106,334-183,534 step records per
CPU-second (4 was the minimum before: without the bound and with the pair scan they cost 25-30% of the
rate at ``w = 2``)."""

STATS = np.zeros(47, dtype=np.int64)
"""Counters of the kernel's work, added to by every run in this process (diagnostics for benchmarks,
never read by the step): 0 rounds, 1 single moves applied, 2 lift scans, 3 lifts tried, 4 lifts
applied, 5 pair scans, 6 pairs applied, 7 steps searched, 8 steps ended by the bound, 10-19 applied lifts
by snapshot (0 = newest), 20-29 by levels raised, 30-32 by variant (strict, drain, shed), 33 swaps, 34
snapshots emptied, 35 lift levels skipped by the bound, 9 flow polishes that cancelled a cycle, 36
level-transfer candidates solved, 37 level transfers applied, 38 level-transfer candidates skipped by
the dual bound (``XFER_BOUND``), 39 level-transfer candidates proved infeasible by the cut test
(``XFER_HALL``; with ``XFER_HALL_CHECK`` solved anyway), 40 of those whose flow was accepted (with
``XFER_HALL_CHECK``: must stay 0), 41 solved candidates whose flow ended infeasible (rejected), 42 flows whose cycle cancelling stopped on
a parent-graph cycle that was not negative (rounding; the flow not proved optimal: never with
``PENALTY_BOUND``), 43 cycles cancelled in level-transfer candidates' flows, 44 forward duals taken from the flow
polish (``DUAL_REUSE``), 45 level-transfer candidates skipped by an earlier candidate's dual (``XFER_DUALS``), 46 emptyings not tried
(``EMPTY_BOUND``).

Measured (2026-11-25, shared 2-core machine, perf): before the small helpers (``cost_of``, ``add_ok``,
``removal_ok``, ``inc``/``dec``) were inlined at numba's IR level, about half of the kernel's time was
in numba's atomic reference counting of the array arguments of each call; inlining them cut the step
CPU by 10-15% and raised the cold compile from ~36 to ~54 CPU-s (load 10-12); inlining every helper
cut ~7% more but took ~98 CPU-s to compile, and ``lift`` cannot be inlined (numba refuses). Those
compile times included numba's extra versions of ten functions for literal argument types (see
``_fastkernel._NOLIT``): without them, 2026-11-26, the cold compile is 19.0 CPU-s (was 49.0, same
machine, side by side). The inlined helpers still paid it inside loops where their bodies branch
(numba's pruning keeps an increment and decrement pair across a branch): since 2026-11-26 the search
(``local_search`` and everything it calls) allocates nothing and is compiled without reference counting
(``_fastkernel.jit_nonrt``), and the flows' network is rewritten in place after a cycle: the same
placements, x1.4-2.0 step rate on daily use-of-force (docs/benchmarks.md, "Fast step: the same search,
cheaper")."""

XFER_REACH_PER_W = 4
"""A level transfer raises one pending snapshot and lowers another at most ``max(1, w //
XFER_REACH_PER_W)`` snapshots away (1 up to ``w = 7``, 2 at ``w = 8``). Measured on daily use-of-force
(docs/benchmarks.md, 2026-11-25 23:20): at ``w = 8`` neighbours only left five cells 2.1-2.8% above the exact
step; two apart brings all eight within 2% (1.006-1.019) at x0.71-0.79 of the step rate; any two
snapshots (1.005-1.018) cost x0.37-0.44; at ``w = 4`` any two gained at most 0.5% for x0.7-0.77."""

_kernel = None


def kernel():
    """The compiled kernel module (imports numba; compiles or loads from cache on first use, with a tiny
    warm-up run, timed into :data:`JIT_COMPILE_CPU_SECONDS`)."""
    global _kernel, JIT_COMPILE_CPU_SECONDS
    if _kernel is None:
        c0 = _time.process_time()
        from tempanon.stream import _fastkernel as k

        codes = np.array([0, 0, 1, 0, 2, 1], dtype=np.int64)
        place = np.array([0, 0, 0, 1, 1, 1], dtype=np.int64)
        place[1] = -1
        starts = np.array([0, 3, 6], dtype=np.int64)
        run_steps(k, codes, place, starts, 0, 0, 2, 2, np.array([0.0, 1.0]), np.full(3, 10.0), 2.0 / 3.0,
                  np.zeros(3, dtype=np.int64), np.full(3, -1, dtype=np.int64), -1)
        _kernel = k
        JIT_COMPILE_CPU_SECONDS += _time.process_time() - c0
    return _kernel


def run_steps(k, codes, place, starts, base, t_from, t_to, l, mu, beta, defer, seen, pub_max, final_oldest):
    """Run the kernel's steps ``t_from..t_to - 1`` (see ``_fastkernel.steps``); returns per step
    ``(method, certificate, active, gap)`` arrays (``gap``: IL above the cheapest-option bound)."""
    K = t_to - t_from
    out_method = np.zeros(K, dtype=np.int64)
    out_cert = np.zeros(K, dtype=np.int64)
    out_active = np.zeros(K, dtype=np.int64)
    out_gap = np.zeros(K, dtype=np.float64)
    mu = np.ascontiguousarray(mu, dtype=np.float64)
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    w = len(mu) - 1
    moves = MOVES if w >= XFER_MIN_W else MOVES & ~XFER
    round_prices = bool(np.all(mu == np.round(mu)) and np.all(beta == np.round(beta)))
    k.steps(codes, place, starts, base, t_from, t_to, l, w, mu, beta, float(defer), round_prices, seen, pub_max,
            final_oldest, out_method, out_cert, out_active, out_gap, MAX_ROUNDS, PAIR_BUDGET, LIFT_LEVELS, STATS, moves,
            TIE, max(1, w // XFER_REACH_PER_W))
    return out_method, out_cert, out_active, out_gap
