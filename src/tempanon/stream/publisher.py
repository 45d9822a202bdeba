"""The online publisher of a stream of snapshots (Wang, Xu, Wong, Fu, ICDM 2010, Sections III-V).

:class:`StreamPublisher` receives ``D[1], D[2], ...`` through :meth:`~StreamPublisher.push` and returns
the snapshots that leave the window, each published l-diverse by Anatomy; :meth:`~StreamPublisher.flush`
publishes the rest at the end of the stream. Snapshot ``j`` is released when ``D[j + w]`` arrives, so
the publication delay is at most ``w`` snapshots; a record of ``D[h]`` is published in some ``D'[j]``
with ``h <= j <= h + w`` or suppressed.

Each step (a new snapshot ``D[t]``)
------------------------------------
The pending snapshots are ``D'[t-w] .. D'[t]`` (nothing of them is published yet). The *active* records
are the records not yet published whose home ``h`` still reaches a pending snapshot (``h + w >= t - w``):
the records placed in pending snapshots, the new ones, and the suppressed ones that can still be
*recycled* (published late instead of suppressed).

1. **Initial solution** (Section IV): the new snapshot keeps its records in place except that its most
   frequent value is suppressed, one record at a time, until it is l-eligible
   (:func:`~tempanon.stream.model.initial_suppression`). With the previous window l-eligible this is a
   feasible solution.
2. ``step="fast"`` (the default) and ``step="exact"``: the *broader step problem* (tempanon's, not the paper's Definition 2,
   which keeps the inherited snapshots' value counts fixed; ``step="paper"`` runs that one,
   :mod:`tempanon.stream.recycle`): find the placement of the active records in the pending snapshots (repositioning forward by at most
   ``w``, recycling suppressed records, suppressing) of minimum information loss (Equation 2) with
   every pending snapshot l-eligible.

   ``step="fast"`` solves it heuristically with tempanon's compiled local search
   (:mod:`tempanon.stream.fast`; all steps of a :meth:`StreamPublisher.push_coded_many` batch in one
   kernel call, not proven optimal). With ``step="exact"``, step 2 runs
   :func:`tempanon.stream.reposition.optimal_reposition` on counts of interchangeable
   records (records with the same home and sensitive value): from the initial solution it applies
   LP-Repositions and repaired LL-Repositions (relays included), best information gain (Equations
   5-6) first, rolling an LL-Reposition back when its repair does not pay; records keep timestamp
   order inside a group (Theorem 1). Its result is kept only with a certificate of optimality (one
   pending snapshot: exact single-snapshot solver; or a matching lower bound). Otherwise the step is
   solved exactly by the step ILP of :mod:`tempanon.stream.window` (cap form, HiGHS), because moves
   into the new snapshot are not always enough for this step problem (see the module doc of
   :mod:`tempanon.stream.reposition` for a counterexample). The initial solution is returned without
   any search when it is provably optimal: with ``w = 0`` (the cap of the initial solution is the
   cheapest suppression for any ``beta``, see :func:`~tempanon.stream.model.eligible_cap`) and when no
   active record is repositioned or suppressed (information loss 0). :meth:`StreamPublisher.summary`
   counts the steps of each path.

   *Pricing* (extension, ``defer``, default ``2/3``): a suppression that a later step can still
   recycle is priced between ``beta`` (the paper, ``defer = 0``) and its cheapest recycling
   (:func:`~tempanon.stream.model.deferred_suppression_cost`); the step is solved exactly for those
   prices, and :meth:`StreamPublisher.flush` re-solves the last window with the true costs.

   The acceptance test (``tests/stream/test_stream_oracle.py``) compares every step with an
   independent per-record ILP and with brute force on random windows, for linear and quadratic ``mu``.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tempanon.errors import InputError
from tempanon.stream.anatomy import NotEligibleError, anatomy_groups, anatomy_segments, check_release_names, qit_order, sensitive_table
from tempanon.stream.model import (
    DEFAULT_DEFER,
    DEFAULT_STEP,
    validate_step,
    CostModel,
    deferred_suppression_cost,
    initial_suppression,
    initial_suppression_segments,
    surplus_values,
    validate_defer,
    validate_l,
    validate_window,
)
from tempanon.stream.reposition import optimal_reposition
from tempanon.stream.window import WindowProblem, solve_step_bb, solve_step_caps, solve_window_ilp

MISSING = None  # the key of a missing sensitive value (its own category)


@dataclass
class PublishedSnapshot:
    """One released snapshot ``D'[j]``.

    ``qit`` and ``st`` are the Anatomy tables (what is published; ``None`` when the snapshot was pushed
    with :meth:`StreamPublisher.push_coded`, whose caller builds them in bulk). ``rows`` (the input index
    of each published record, in QIT row order), ``home``, ``distance`` (in snapshots), ``codes`` and
    ``group`` are for the data steward only.
    """

    index: int
    label: str
    rows: np.ndarray
    home: np.ndarray
    distance: np.ndarray
    codes: np.ndarray
    group: np.ndarray
    information_loss: float
    qit: pd.DataFrame | None = None
    st: pd.DataFrame | None = None

    @property
    def size(self) -> int:
        return int(len(self.rows))


@dataclass
class _Snapshot:
    label: str
    qi: pd.DataFrame | None  # None when pushed with push_coded
    codes: np.ndarray
    rows: np.ndarray
    place: np.ndarray  # absolute snapshot index, -1 suppressed
    n_supp: int = 0  # records of the snapshot suppressed (place == -1)
    last: int = -1  # the latest place of a record of the snapshot (-1: none placed)

    def refresh(self) -> None:
        """Recount ``n_supp`` and ``last`` after ``place`` changed."""
        self.n_supp = int(np.count_nonzero(self.place < 0))
        self.last = int(self.place.max()) if len(self.place) else -1


@dataclass
class StepStats:
    """One step: ``method`` ``initial`` (the initial solution is proven optimal), ``combinatorial``
    (OptimalReposition with a certificate) or ``milp`` (the step ILP); ``certificate`` the proof used
    without ILP; ``confirmed`` (ILP steps) whether the combinatorial IL already was the optimum;
    ``solver`` (ILP steps) which exact solver decided.
    ``seconds``: the step's time (with :meth:`StreamPublisher.push_coded_many` the initial solutions
    are computed for all snapshots at once, and that time is shared evenly among the steps)."""

    method: str
    active: int
    seconds: float
    certificate: str | None = None
    confirmed: bool | None = None
    solver: str | None = None  # ILP steps: "branch-and-bound" (solve_step_bb), "highs-caps" or "highs-direct"


def _not_releasable(exc, labels: list, l: int):
    """The :class:`~tempanon.errors.VerificationError` (exit status 3, nothing written) for a release
    Anatomy refused as not l-eligible (:class:`~tempanon.stream.anatomy.NotEligibleError`): the step
    is meant to guarantee l-eligibility, so this is a bug, never the user's bad input."""
    from tempanon.errors import VerificationError

    return VerificationError(f"verification failed: released snapshot {labels[exc.segment]!r} is not {l}-diverse "
                             f"({exc}); not written (a bug in the stream step)")


class StreamPublisher:
    """Publish a stream of snapshots l-diverse with publication delay at most ``w``.

    Parameters
    ----------
    l: the diversity parameter (``>= 2``).
    w: the maximum publication delay in snapshots (``>= 0``; ``0`` means suppression only).
    sensitive: name of the sensitive column of every pushed snapshot.
    qi: the quasi-identifier columns published in the QIT (default: every column but ``sensitive``).
    cost: a :class:`~tempanon.stream.model.CostModel`, or ``"linear"`` / ``"quadratic"``.
    suppression_cost: ``beta`` (a number, or ``{value: cost, "default": cost}``) when ``cost`` is a name.
    verify: check every release with :func:`tempanon.verify.check_anatomy` (independent checker).
    seed: seed of Anatomy's random choices.
    defer: extension (not in the paper), a number in ``[0, 1]`` (default ``2/3``; ``False`` = 0,
        ``True`` = 1): how a step prices the suppression of a record that can still reach a future
        snapshot (``h + w > t``), see :func:`~tempanon.stream.model.deferred_suppression_cost`. ``0`` is
        the paper's pricing (``beta``); ``1`` charges its cheapest recycling ``min(beta, mu(t + 1 - h))``.
        The paper's step keeps every pending snapshot l-eligible and charges ``beta`` for such a
        suppression, which makes it pull records out of the snapshot about to be published (a sunk
        cost) to fix the newest snapshot, a fix the next snapshot might have made for less. The step is
        still solved exactly, for these prices; the final IL is always Equation (2). On use-of-force at
        ``w = 4`` the default is within 10% of the offline optimum in all 8 cells, the paper's pricing
        in 5 (docs/benchmarks.md).

    Records of a pushed snapshot are taken in the order given (sort them by time so that repositioned
    records keep timestamp order, Theorem 1); the snapshot's index labels identify them in
    :attr:`PublishedSnapshot.rows`.
    """

    def __init__(
        self,
        l: int,
        w: int,
        *,
        sensitive: str,
        qi: list[str] | None = None,
        cost: CostModel | str = "linear",
        suppression_cost: float | dict = 10.0,
        verify: bool = True,
        seed: int = 0,
        defer: float | bool | None = None,
        step: str = DEFAULT_STEP,
    ) -> None:
        self.l = validate_l(l)
        self.step = validate_step(step)
        if defer is None:
            defer = 0.0 if self.step == "paper" else DEFAULT_DEFER
        elif self.step == "paper" and validate_defer(defer) > 0:
            raise InputError("step 'paper' prices every suppression at beta (Definition 2): defer must be 0 with it")
        self.w = validate_window(w)
        if isinstance(cost, str):
            if cost == "linear":
                cost = CostModel.linear(self.w, 1.0, suppression_cost)
            elif cost == "quadratic":
                cost = CostModel.quadratic(self.w, suppression_cost)
            else:
                raise InputError(f"unknown cost {cost!r}: use 'linear', 'quadratic' or a CostModel")
        if cost.window < self.w:
            raise InputError(f"the cost model is tabulated up to {cost.window}, but the window is {self.w}")
        self.cost = cost
        self.mu = np.asarray(cost.mu[: self.w + 1], dtype=float)
        if isinstance(qi, str):  # 'race,sex' as anonymize_stream reads it (list('race,sex') was its letters)
            qi = [c.strip() for c in qi.split(",") if c.strip()]
        qi = None if qi is None else list(qi)
        if qi is not None and sensitive in qi:
            # the QIT would publish each record's sensitive value beside its group: Anatomy protects nothing
            raise InputError(f"column {sensitive!r} cannot be a quasi-identifier: it is the sensitive column")
        if qi is not None and len(set(qi)) < len(qi):
            raise InputError(f"quasi-identifier {next(c for c in qi if qi.count(c) > 1)!r} is given twice")
        check_release_names(qi, sensitive)  # (qi None: the records' keys, checked by the caller)
        self.sensitive = sensitive
        self.qi = qi
        self.verify = verify
        self.defer = validate_defer(defer)
        self._first_window_done = False
        self._pub_max_home = np.zeros(0, dtype=np.int64)  # per value code: latest home published (Theorem 1)  # step "paper": the first window's ILP (Section III)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InputError(f"seed must be an integer >= 0, got {seed!r}")
        self._rng = np.random.default_rng(seed)
        self._snaps: list[_Snapshot] = []
        self._codes: dict = {}
        self._values: list = []
        self._beta = np.zeros(0)
        self._next_pub = 0  # first snapshot not yet published
        self._flushed = False
        self.steps: list[StepStats] = []
        self.figure4 = "corrected"  # step "paper": the Figure 4 loop (recycle.figure4), "literal" as printed
        self.relays = 0  # step "paper": relays applied (Theorem 2's sigma) and records they moved
        self.chain_moves = 0
        self._seen = np.zeros(0, dtype=np.int64)  # records of each value in D[0.._seen_upto - 1]
        self._seen_upto = 0
        self.final_step: StepStats | None = None  # the re-solve of the pending snapshots by flush()
        self.step_cpu_seconds = 0.0  # CPU time (process_time) spent in the online steps
        self.jit_compile_cpu_seconds = 0.0  # step "fast": CPU time compiling / loading its kernel (not in step_cpu_seconds)
        self.step_solver = "bb"  # "bb" (solve_step_bb, then solve_step_caps), "caps" (solve_step_caps) or "direct" (solve_window_ilp only)

    # ------------------------------------------------------------------ inputs
    def _code(self, column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        vals = column.astype(object)
        vals = vals.where(vals.notna(), MISSING).to_numpy(dtype=object)
        uniq = pd.unique(vals)
        new = [v for v in uniq if v not in self._codes]
        for v in new:
            self._codes[v] = len(self._values)
            self._values.append(v)
        if new:
            self._beta = self.cost.beta_array(self._values)
        lookup = np.array([self._codes[v] for v in uniq], dtype=np.int64)
        idx = pd.Index(uniq).get_indexer(vals) if len(uniq) else np.zeros(0, dtype=np.int64)
        return vals, lookup[idx]

    def push(self, snapshot: pd.DataFrame, label: str | None = None) -> list[PublishedSnapshot]:
        """Add the next snapshot ``D[t]`` and return the snapshots leaving the window (``D'[t-w]``)."""
        if self._flushed:
            raise InputError("the stream was already flushed; no snapshot can be pushed after flush()")
        if not isinstance(snapshot, pd.DataFrame):
            raise InputError(f"a snapshot must be a DataFrame, got {type(snapshot).__name__}")
        if self.sensitive not in snapshot.columns:
            raise InputError(f"snapshot {label or len(self._snaps)}: missing sensitive column {self.sensitive!r}")
        if self.qi is None:
            self.qi = [c for c in snapshot.columns if c != self.sensitive]
            check_release_names(self.qi, self.sensitive)
        missing = [c for c in self.qi if c not in snapshot.columns]
        if missing:
            raise InputError(f"snapshot {label or len(self._snaps)}: missing quasi-identifier column(s) {missing}")
        values, codes = self._code(snapshot[self.sensitive])
        return self._push(codes, snapshot.index.to_numpy(), label, snapshot[self.qi].reset_index(drop=True))

    def set_values(self, values: list) -> None:
        """Declare the sensitive values (code ``i`` is ``values[i]``, ``None`` = missing) before
        :meth:`push_coded`."""
        for v in values:
            if v not in self._codes:
                self._codes[v] = len(self._values)
                self._values.append(v)
        self._beta = self.cost.beta_array(self._values)

    def push_coded(self, codes: np.ndarray, rows: np.ndarray, label: str | None = None) -> list[PublishedSnapshot]:
        """Like :meth:`push` for a snapshot given as value codes (see :meth:`set_values`) and row ids;
        the releases carry no ``qit``/``st`` (the caller builds and verifies them)."""
        if self._flushed:
            raise InputError("the stream was already flushed; no snapshot can be pushed after flush()")
        codes = np.asarray(codes, dtype=np.int64)
        if len(codes) and (codes.min() < 0 or codes.max() >= len(self._values)):
            raise InputError("push_coded: a code is outside the declared sensitive values")
        return self._push(codes, np.asarray(rows), label, None)

    def push_coded_many(
        self, codes: np.ndarray, rows: np.ndarray, bounds: np.ndarray, labels: list, progress=None
    ) -> list[PublishedSnapshot]:
        """Push the snapshots ``k = 0..K-1`` (codes ``codes[bounds[k]:bounds[k + 1]]``, row ids
        likewise, label ``labels[k]``) as :meth:`push_coded` would, one after the other, and return
        every snapshot that leaves the window meanwhile, in order. The steps are the same (same
        placements, same :attr:`steps`), computed in bulk where they do not depend on each other: the
        initial solution of every snapshot depends on its own counts only
        (:func:`~tempanon.stream.model.initial_suppression_segments`); with ``w = 0`` it is the step's
        proven optimum, so no per-snapshot work remains; and the releases are grouped by Anatomy all
        at once (:func:`~tempanon.stream.anatomy.anatomy_segments`: the same partition rule and the
        same random keys as snapshot by snapshot, so the same releases). ``progress(k, K)`` is called
        every 64 snapshots."""
        if self._flushed:
            raise InputError("the stream was already flushed; no snapshot can be pushed after flush()")
        codes = np.asarray(codes, dtype=np.int64)
        rows = np.asarray(rows)
        bounds = np.asarray(bounds, dtype=np.int64)
        K = len(bounds) - 1
        if K < 0 or len(labels) != K or bounds[0] != 0 or bounds[-1] != len(codes) or np.any(np.diff(bounds) < 0):
            raise InputError("push_coded_many: bounds must rise from 0 to the number of records, one label per snapshot")
        if len(codes) and (codes.min() < 0 or codes.max() >= len(self._values)):
            raise InputError("push_coded: a code is outside the declared sensitive values")
        if K == 0:
            return []
        t0 = len(self._snaps)
        sizes = np.diff(bounds)
        start = _time.perf_counter()
        cpu0 = _time.process_time()
        seg = np.repeat(np.arange(K), sizes)
        drop, n_supp = initial_suppression_segments(codes, seg, K, self.l)
        self.step_cpu_seconds += _time.process_time() - cpu0  # the initial solutions of all K steps
        place = np.repeat(t0 + np.arange(K), sizes)
        place[drop] = -1
        kept = sizes - n_supp
        share = (_time.perf_counter() - start) / K
        released = []  # (j, label, codes, rows, homes) of each snapshot leaving the window
        cut, n_supp_l, kept_l, sizes_l = bounds.tolist(), n_supp.tolist(), kept.tolist(), sizes.tolist()
        for k in range(K):
            t = t0 + k
            a, b = cut[k], cut[k + 1]
            label = labels[k]
            self._snaps.append(
                _Snapshot(
                    label=str(label if label is not None else t),
                    qi=None,
                    codes=codes[a:b],
                    rows=rows[a:b],
                    place=place[a:b],  # a view: the steps write into ``place``
                    n_supp=n_supp_l[k],
                    last=t if kept_l[k] else -1,
                )
            )
            if self.w == 0:
                self.steps.append(StepStats("initial", sizes_l[k], share, "w = 0"))
            elif self.step == "fast":
                pass  # all K steps in one kernel call below
            else:
                self._step(t, new_suppressed=int(n_supp[k]), extra_seconds=share)
                if t - self.w >= 0:
                    released.append(self._release(t - self.w))
                    self._next_pub = t - self.w + 1
            if progress is not None and (k % 64 == 0 or k == K - 1):
                progress(k + 1, K)
        if self.w > 0 and self.step == "fast":
            kern = self._fast_kernel()  # compile / cache load: jit_compile_cpu_seconds, not step time
            start_k = _time.perf_counter()
            cpu_k = _time.process_time()
            res = self._fast_steps(kern, t0, t0 + K)
            self.step_cpu_seconds += _time.process_time() - cpu_k
            share_k = share + (_time.perf_counter() - start_k) / K
            self.steps.extend(StepStats(method, active, share_k, cert) for method, cert, active in res)
            for k in range(K):
                t = t0 + k
                if t - self.w >= 0:
                    released.append(self._release(t - self.w))
                    self._next_pub = t - self.w + 1
        if self.w == 0:
            keep = ~drop
            c, r = codes[keep], rows[keep]
            hm = t0 + seg[keep]
            seg_r = seg[keep]
            labs = [s.label for s in self._snaps[t0:]]
            js = t0 + np.arange(K)
            self._next_pub = t0 + K
        else:
            if not released:
                return []
            js = np.array([j for j, *_ in released], dtype=np.int64)
            labs = [lab for _, lab, *_ in released]
            c = np.concatenate([x[2] for x in released])
            r = np.concatenate([x[3] for x in released])
            hm = np.concatenate([x[4] for x in released])
            seg_r = np.repeat(np.arange(len(released)), [len(x[2]) for x in released])
        R = len(js)
        try:
            group, order = anatomy_segments(c, seg_r, R, self.l, self._rng)
        except NotEligibleError as exc:
            raise _not_releasable(exc, labs, self.l) from exc
        c, r, hm, group = c[order], r[order], hm[order], group[order]
        n_rel = np.bincount(seg_r, minlength=R)
        dist = np.repeat(js, n_rel) - hm
        il = np.bincount(seg_r, weights=self.mu[dist], minlength=R)
        cuts = np.concatenate([[0], np.cumsum(n_rel)]).tolist()
        js_list, il_list = js.tolist(), il.tolist()
        return [
            PublishedSnapshot(js_list[i], labs[i], r[a:b], hm[a:b], dist[a:b], c[a:b], group[a:b], il_list[i])
            for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:]))
        ]

    def _push(self, codes: np.ndarray, rows: np.ndarray, label, qi: pd.DataFrame | None) -> list[PublishedSnapshot]:
        t = len(self._snaps)
        self._snaps.append(
            _Snapshot(
                label=str(label if label is not None else t),
                qi=qi,
                codes=codes,
                rows=rows,
                place=np.full(len(codes), t, dtype=np.int64),
                last=t if len(codes) else -1,
            )
        )
        self._step(t)
        out = []
        if t - self.w >= 0:
            out.append(self._publish(t - self.w))
        return out

    def flush(self) -> list[PublishedSnapshot]:
        """End of stream: publish every pending snapshot (their placement is final).

        With ``defer > 0`` the last step priced some suppressions as if a later step could still
        recycle them; at the end of the stream none can, so the pending snapshots are first re-solved
        once with the true costs ``beta`` (the paper's step over ``D'[next..t]``, the published snapshots
        fixed; :attr:`final_step`). With ``defer = 0`` that step would change nothing (the last step was
        already optimal for these costs) and is skipped."""
        if not self._flushed and self.step == "paper" and self.w > 0 and self._snaps and not self._first_window_done and self._next_pub == 0:
            if not self._too_few_values(len(self._snaps) - 1):
                self._first_window(len(self._snaps) - 1)  # a stream shorter than the first window
        elif not self._flushed and self.defer > 0 and self.w > 0 and self._next_pub < len(self._snaps):
            self._final_step()
        out = [self._publish(j) for j in range(self._next_pub, len(self._snaps))]
        self._flushed = True
        return out

    def _final_step(self) -> None:
        """Re-solve the pending snapshots ``D'[next..t]`` with the paper's prices (see :meth:`flush`)."""
        start = _time.perf_counter()
        t = len(self._snaps) - 1
        oldest = self._next_pub
        parts = self._active_parts(oldest, t)
        defer, self.defer = self.defer, 0.0
        try:
            if self.step == "fast":
                method, certificate, _ = self._fast_steps(self._fast_kernel(), t, t + 1, final_oldest=oldest)[0]
                confirmed = solver = None
            else:
                method, certificate, confirmed, solver = self._optimal_reposition(t, oldest, parts)
        finally:
            self.defer = defer
        active = sum(len(idx) for _, idx in parts)
        self.final_step = StepStats(method, active, _time.perf_counter() - start, certificate, confirmed, solver)

    # ------------------------------------------------------------------ one step
    def _step(self, t: int, new_suppressed: int | None = None, extra_seconds: float = 0.0) -> None:
        """Step ``t``; ``new_suppressed``: the initial solution of ``D[t]`` was already applied (by
        :meth:`push_coded_many`) and suppressed that many records."""
        start = _time.perf_counter()
        cpu0 = _time.process_time()
        w = self.w
        oldest = max(0, t - w)
        new = self._snaps[t]
        certificate = confirmed = solver = None
        # 1. the initial solution of the new snapshot (Section IV)
        if new_suppressed is None:
            new_suppressed = self._initial(t)
        if w > 0 and self.step == "fast":
            cpu_k = _time.process_time()
            k = self._fast_kernel()
            cpu0 += _time.process_time() - cpu_k  # compile / cache load: reported apart (jit_compile_cpu_seconds)
            method, certificate, active = self._fast_steps(k, t, t + 1)[0]
        elif w > 0 and self.step == "paper" and not self._too_few_values(t):
            method, certificate, active = self._paper_step(t)
        elif w == 0:
            method, certificate = "initial", "w = 0"
            active = len(new.codes)
        elif self._too_few_values(t):
            # a non-empty l-eligible snapshot holds >= l distinct values: with fewer in the stream so
            # far nothing can be published, and the initial solutions suppressed every record already
            # (active: every record of a home within reach of D'[oldest..t], all suppressed)
            method, certificate = "initial", "fewer than l values"
            active = sum(len(s.codes) for s in self._snaps[max(0, oldest - w) : t + 1])
        else:
            # an active record (not published: placed in a pending snapshot or suppressed) of an
            # older snapshot h is moved or suppressed iff its place is -1 or >= max(h + 1, oldest)
            first = max(0, t - 2 * w)
            moved_or_suppressed = any(
                s.n_supp > 0 or s.last >= max(h + 1, oldest) for h, s in enumerate(self._snaps[first:t], start=first)
            )
            if not moved_or_suppressed and new_suppressed == 0:
                # every active record is at home: all records of D[oldest..t], none older
                method, certificate = "initial", "lower bound"  # information loss 0: optimal
                active = sum(len(s.codes) for s in self._snaps[oldest : t + 1])
            else:
                parts = self._active_parts(oldest, t)
                active = sum(len(idx) for _, idx in parts)
                # 2. OptimalReposition (Section V) on counts, with a certificate or the step ILP
                method, certificate, confirmed, solver = self._optimal_reposition(t, oldest, parts)
        seconds = _time.perf_counter() - start + extra_seconds
        self.step_cpu_seconds += _time.process_time() - cpu0
        self.steps.append(StepStats(method, active, seconds, certificate, confirmed, solver))

    # ------------------------------------------------------------------ the fast step (tempanon's heuristic)
    def _fast_kernel(self):
        """The fast step's compiled kernel (:func:`tempanon.stream.fast.kernel`); the CPU time of its first
        load in this process is added to :attr:`jit_compile_cpu_seconds`, never to a step's time."""
        from tempanon.stream import fast

        before = fast.JIT_COMPILE_CPU_SECONDS
        k = fast.kernel()
        self.jit_compile_cpu_seconds += fast.JIT_COMPILE_CPU_SECONDS - before
        return k

    def _fast_steps(self, k, t_from: int, t_to: int, final_oldest: int = -1) -> list[tuple[str, str | None, int]]:
        """Steps ``t_from..t_to - 1`` of the fast step (:mod:`tempanon.stream.fast`) on the snapshots
        already appended (their initial solutions applied), in one kernel call; the placements are
        written back into the snapshots. ``final_oldest >= 0``: :meth:`flush`'s re-solve of
        ``D'[final_oldest..t_to - 1]`` with ``defer = 0``. Returns ``(method, certificate, active)`` per step."""
        from tempanon.stream.fast import CERTIFICATES, METHOD_FAST, run_steps

        m = len(self._values)
        base = max(0, min(t_from, final_oldest if final_oldest >= 0 else t_from) - 2 * self.w)
        snaps = self._snaps[base:t_to]
        sizes = [len(sn.codes) for sn in snaps]
        starts = np.zeros(len(snaps) + 1, dtype=np.int64)
        np.cumsum(sizes, out=starts[1:])
        codes = np.concatenate([sn.codes for sn in snaps]).astype(np.int64, copy=False)
        place = np.concatenate([sn.place for sn in snaps]).astype(np.int64, copy=True)
        seen = self._seen_counts(t_to - 1, m)[:m].copy()
        if final_oldest < 0:  # the kernel adds D[t_from..t_to - 1] itself
            seen -= np.bincount(codes[starts[t_from - base]:], minlength=m)[:m]
        pub_max = self._published_max_home()[:m].copy()
        method, cert, active, _gap = run_steps(
            k, codes, place, starts, base, t_from, t_to, self.l, self.mu, self._beta[:m], self.defer, seen, pub_max, final_oldest
        )
        # write back, and n_supp / last of every touched snapshot
        seg = np.repeat(np.arange(len(snaps)), sizes)
        n_supp = np.bincount(seg, weights=place < 0, minlength=len(snaps)).astype(np.int64)
        last = np.full(len(snaps), -1, dtype=np.int64)
        np.maximum.at(last, seg, place)
        for i, sn in enumerate(snaps):
            sn.place[:] = place[starts[i] : starts[i + 1]]
            sn.n_supp = int(n_supp[i])
            sn.last = int(last[i])
        return [
            ("fast" if mt == METHOD_FAST else "initial", CERTIFICATES.get(int(c)), int(a))
            for mt, c, a in zip(method.tolist(), cert.tolist(), active.tolist())
        ]

    # ------------------------------------------------------------------ the paper's step (Definition 2)
    def _paper_step(self, t: int) -> tuple[str, str | None, int]:
        """Step ``t`` of the paper's method (``step="paper"``): before the window is full nothing is
        decided (the records wait at home); at ``t = w`` the *first window* ``D[0..w]`` is solved by the
        window ILP (Section III); every later step is recycle-reposition (Definition 2,
        :func:`tempanon.stream.recycle.recycle_step`). Returns ``(method, certificate, active)``."""
        w = self.w
        if t < w:
            return "initial", "first window pending", len(self._snaps[t].codes)
        if not self._first_window_done:
            if self._next_pub == 0:
                return self._first_window(t)
            # the stream had fewer than l values when its first window was full: every record so far was
            # suppressed and some snapshots are published; the steps go on from there
            self._first_window_done = True
        from tempanon.stream.recycle import recycle_step

        oldest = t - w
        old_parts, cand_parts = [], []
        for h in range(max(0, t - 2 * w), t):
            sn = self._snaps[h]
            if h < oldest:
                if sn.last >= oldest:
                    idx = np.flatnonzero(sn.place >= oldest)
                    if len(idx):
                        old_parts.append((h, idx))
                continue
            if sn.n_supp:
                old_parts.append((h, np.flatnonzero(sn.place >= 0)))
                cand_parts.append((h, np.flatnonzero(sn.place < 0)))
            else:
                old_parts.append((h, np.arange(len(sn.place))))
        new = self._snaps[t]
        if not any(len(i) for _, i in cand_parts) and not new.n_supp:
            return "initial", "nothing to recycle", len(new.codes)
        cand_parts.append((t, np.arange(len(new.codes))))
        cat = lambda parts, f: np.concatenate([f(h, i) for h, i in parts]) if parts else np.zeros(0, np.int64)  # noqa: E731
        res = recycle_step(
            cat(old_parts, lambda h, i: np.full(len(i), h, np.int64)),
            cat(old_parts, lambda h, i: self._snaps[h].place[i]),
            cat(old_parts, lambda h, i: self._snaps[h].codes[i]),
            cat(cand_parts, lambda h, i: np.full(len(i), h, np.int64)),
            cat(cand_parts, lambda h, i: self._snaps[h].codes[i]),
            cat(cand_parts, lambda h, i: self._snaps[h].place[i] >= 0),
            t=t, w=w, l=self.l, mu=self.mu, beta=self._beta, variant=self.figure4,
        )
        for parts, new_place in ((old_parts, res.old_place), (cand_parts, res.cand_place)):
            off = 0
            for h, i in parts:
                sn = self._snaps[h]
                sn.place[i] = new_place[off : off + len(i)]
                sn.refresh()
                off += len(i)
        self.relays += res.relays
        self.chain_moves += res.chain_moves
        active = sum(len(i) for _, i in old_parts) + sum(len(i) for _, i in cand_parts)
        return "recycle", f"Figure 4 ({self.figure4})", active

    def _first_window(self, t: int) -> tuple[str, str | None, int]:
        """The paper's first window (Section III): ``D[0..t]`` (nothing published yet) solved by the
        window ILP, every placement free."""
        parts = [(h, np.arange(len(self._snaps[h].codes))) for h in range(t + 1)]
        m = len(self._values)
        rec_home = np.concatenate([np.full(len(i), h, dtype=np.int64) for h, i in parts])
        rec_code = np.concatenate([self._snaps[h].codes for h, _ in parts])
        rec_pos = np.concatenate([i for _, i in parts])
        gkey, ginv, gcount = np.unique(rec_home * m + rec_code, return_inverse=True, return_counts=True)
        ghome, gcode = gkey // m, gkey % m
        problem = WindowProblem(home=ghome, code=gcode, count=gcount, lo=ghome, hi=np.minimum(ghome + self.w, t),
                                l=self.l, mu=self.mu, beta=self._beta)
        sol = solve_window_ilp(problem)
        x = np.zeros((len(gkey), t + 1), dtype=np.int64)
        np.add.at(x, (sol.var_group, sol.var_place), sol.var_count)
        self._apply_counts(parts, ginv, rec_pos, x, sol.suppressed, 0)
        self._restore_order(parts, 0)  # Theorem 1 (an ILP optimum with linear mu may cross records)
        self._first_window_done = True
        return "milp", "first window", len(rec_home)

    def _n_values(self, t: int) -> int:
        """Distinct sensitive values in ``D[0..t]``."""
        return int(np.count_nonzero(self._seen_counts(t, len(self._values)))) if t >= 0 else 0

    def _too_few_values(self, t: int) -> bool:
        return self._n_values(t) < self.l

    def warnings(self) -> list[str]:
        """Warnings about the result so far (also in :meth:`summary`)."""
        out = []
        n_values = self._n_values(len(self._snaps) - 1)
        if self._snaps and n_values < self.l:
            out.append(
                f"the sensitive column {self.sensitive!r} has {n_values} distinct value(s) (missing counted as one), fewer "
                f"than l = {self.l}: no snapshot can be {self.l}-eligible, so every record is suppressed"
            )
        return out

    def _active_parts(self, oldest: int, t: int) -> list[tuple[int, np.ndarray]]:
        """The active records of a step over the pending snapshots ``D'[oldest..t]``, per home ``h``
        (from ``oldest - w``): every record of a pending home (placed in ``D'[h..t]`` or suppressed),
        and of an older home those placed in a pending snapshot or suppressed, the suppressed ones only
        when no record of their value with a later home is published yet (Theorem 1: recycling it would
        break timestamp order with a release that can no longer change)."""
        parts = []
        pub_max = self._published_max_home()
        for h in range(max(0, oldest - self.w), t + 1):
            s = self._snaps[h]
            if h >= oldest:
                parts.append((h, np.arange(len(s.place))))
            else:
                recyclable = (s.place == -1) & (pub_max[s.codes] <= h)
                parts.append((h, np.flatnonzero(recyclable | (s.place >= oldest))))
        return parts

    def _published_max_home(self) -> np.ndarray:
        """Per sensitive value code, the latest home of a published record (-1: none)."""
        m = len(self._values)
        if len(self._pub_max_home) < m:
            self._pub_max_home = np.concatenate([self._pub_max_home, np.full(m - len(self._pub_max_home), -1, dtype=np.int64)])
        return self._pub_max_home

    def _initial(self, t: int) -> int:
        """Initial solution of ``D[t]``: suppress its most frequent value until l-eligible (in place)."""
        s = self._snaps[t]
        if not len(s.codes):
            return 0
        counts = np.bincount(s.codes)
        if self.l * int(counts.max()) <= len(s.codes):
            return 0  # already l-eligible (Definition 1)
        supp = initial_suppression(counts, self.l)
        if supp.sum() == 0:
            return 0
        # suppress the latest records of each over-represented value
        order = np.lexsort((np.arange(len(s.codes)), s.codes))
        sorted_codes = s.codes[order]
        rank_in_code = np.arange(len(order)) - np.searchsorted(sorted_codes, sorted_codes, side="left")
        keep_n = counts[sorted_codes] - supp[sorted_codes]
        drop = rank_in_code >= keep_n
        s.place[order[drop]] = -1
        s.refresh()
        return int(supp.sum())

    def _optimal_reposition(
        self, t: int, oldest: int, parts: list[tuple[int, np.ndarray]]
    ) -> tuple[str, str | None, bool | None, str | None]:
        """Solve the recycle-reposition problem of step ``t`` (see module doc) and apply it: the
        combinatorial OptimalReposition of :mod:`tempanon.stream.reposition` when it proves its result
        optimal, else the step ILP (:meth:`_step_ilp`). Returns (method, certificate, whether the ILP
        confirmed the combinatorial IL, the ILP's solver)."""
        m = len(self._values)
        rec_home = np.concatenate([np.full(len(idx), h, dtype=np.int64) for h, idx in parts])
        rec_code = np.concatenate([self._snaps[h].codes[idx] for h, idx in parts])
        rec_pos = np.concatenate([idx for _, idx in parts])
        rec_place = np.concatenate([self._snaps[h].place[idx] for h, idx in parts])
        key = rec_home * m + rec_code
        gkey, ginv, gcount = np.unique(key, return_inverse=True, return_counts=True)
        ghome, gcode = gkey // m, gkey % m
        G = len(gkey)
        beta = self._beta
        lo, hi = np.maximum(ghome, oldest), np.minimum(ghome + self.w, t)
        if self.defer > 0:
            # deferred suppression (extension): a record that can still reach a future snapshot is
            # priced between beta and its cheapest recycling mu(t + 1 - h) (model.deferred_suppression_cost);
            # per-group costs are encoded through per-group codes (costs are looked up by code)
            surplus = surplus_values(self._seen_counts(t, m), self.l)
            gbeta = deferred_suppression_cost(beta[gcode], ghome, t, self.mu, self.defer, surplus[gcode])
            problem = WindowProblem(
                home=ghome, code=np.arange(G), count=gcount, lo=lo, hi=hi, l=self.l, mu=self.mu, beta=gbeta, value=gcode,
            )
        else:
            problem = WindowProblem(home=ghome, code=gcode, count=gcount, lo=lo, hi=hi, l=self.l, mu=self.mu, beta=beta)
        # the current placement (previous window + initial solution of the new snapshot) as counts
        P = t - oldest + 1
        opt = np.where(rec_place < 0, P, rec_place - oldest)
        xz0 = np.zeros((G, P + 1), dtype=np.int64)
        np.add.at(xz0, (ginv, opt), 1)
        res = optimal_reposition(problem, oldest, t, xz0[:, :P], xz0[:, P])
        if res.certificate is not None:
            x, z = res.x, res.z
            method, certificate, confirmed, solver = "combinatorial", res.certificate, None, None
        else:
            method, certificate = "milp", None
            x, z, confirmed, solver = self._step_ilp(problem, res, oldest)
        self._apply_counts(parts, ginv, rec_pos, x, z, oldest)
        self._restore_order(parts, oldest)
        return method, certificate, confirmed, solver

    def _restore_order(self, parts, oldest: int) -> None:
        """Theorem 1 (the swap in its proof): per sensitive value, the records placed in the pending
        snapshots ``D'[oldest..]`` are re-assigned so that the earliest homes go to the earliest
        snapshots. Counts per (snapshot, value) are unchanged (so is l-eligibility); every record stays
        within its reach (intervals ``[h, h + w]`` of one width: the sorted assignment is feasible when
        any is); the IL does not rise (C3: equal for linear ``mu``, lower for a non-linear one where
        records crossed)."""
        homes, places, codes, pos = [], [], [], []
        for h, idx in parts:
            sn = self._snaps[h]
            i = idx[sn.place[idx] >= oldest]
            homes.append(np.full(len(i), h, dtype=np.int64))
            places.append(sn.place[i])
            codes.append(sn.codes[i])
            pos.append(i)
        home, place, code = np.concatenate(homes), np.concatenate(places), np.concatenate(codes)
        if len(home) < 2:
            return
        seq = np.arange(len(home))
        by_home = np.lexsort((seq, home, code))
        by_place = np.lexsort((place, code))
        new_place = np.empty_like(place)
        new_place[by_home] = place[by_place]
        if np.array_equal(new_place, place):
            return
        off = 0
        for (h, _), i in zip(parts, pos):
            sn = self._snaps[h]
            sn.place[i] = new_place[off : off + len(i)]
            sn.refresh()
            off += len(i)

    def _step_ilp(self, problem: WindowProblem, res, oldest: int) -> tuple[np.ndarray, np.ndarray, bool, str]:
        """The step ILP, for a step no certificate proved: our branch and bound on the caps, with the
        combinatorial solution ``res`` as incumbent, else HiGHS's MILP (cap form, then direct form).
        Returns ``(x, z, confirmed, solver)``, ``confirmed``: the combinatorial IL was optimal."""
        G, P = res.x.shape
        sol, solver = None, None
        if self.step_solver == "bb":
            bb = solve_step_bb(problem, upper_bound=res.il)
            if bb.proven:
                if bb.solution is None:  # nothing is cheaper than the combinatorial solution
                    return res.x, res.z, True, "branch-and-bound"
                sol, solver = bb.solution, "branch-and-bound"
        if sol is None and self.step_solver in ("bb", "caps"):
            sol, solver = solve_step_caps(problem), "highs-caps"
        if sol is None:
            sol, solver = solve_window_ilp(problem, upper_bound=res.il), "highs-direct"
        x = np.zeros((G, P), dtype=np.int64)
        np.add.at(x, (sol.var_group, sol.var_place - oldest), sol.var_count)
        return x, sol.suppressed, bool(sol.il >= res.il - 1e-9 * max(1.0, abs(res.il))), solver

    def _seen_counts(self, t: int, m: int) -> np.ndarray:
        """Records of each value in ``D[0..t]`` (kept up to date incrementally)."""
        if len(self._seen) < m:
            self._seen = np.concatenate([self._seen, np.zeros(m - len(self._seen), dtype=np.int64)])
        while self._seen_upto <= t:
            self._seen += np.bincount(self._snaps[self._seen_upto].codes, minlength=m)[:m]
            self._seen_upto += 1
        return self._seen

    def _apply_counts(self, parts, ginv: np.ndarray, rec_pos: np.ndarray, x: np.ndarray, z: np.ndarray, oldest: int) -> None:
        """Map the counts ``x[g, p]`` (placed in ``oldest + p``) and ``z[g]`` (suppressed) back to the
        records: inside a group, records in timestamp order go to the earliest snapshots and the latest
        ones are suppressed (Theorem 1)."""
        G, P = x.shape
        counts = np.concatenate([x, z[:, None]], axis=1).ravel()  # (group, place) order, suppressed last
        places = np.tile(np.append(oldest + np.arange(P), -1), G)
        dest = np.repeat(places, counts)
        rec_order = np.lexsort((rec_pos, ginv))
        new_place = np.empty(len(rec_pos), dtype=np.int64)
        new_place[rec_order] = dest
        offset = 0
        for h, idx in parts:
            s = self._snaps[h]
            s.place[idx] = new_place[offset : offset + len(idx)]
            s.refresh()
            offset += len(idx)

    # ------------------------------------------------------------------ publishing
    def _release(self, j: int) -> tuple:
        """The records placed in ``D'[j]``: ``(j, label, codes, rows, homes, parts)``, the snapshots in
        home order, each in its input order (``parts``: ``(home, snapshot, indices)``)."""
        assert j == self._next_pub
        parts = []
        for h in range(max(0, j - self.w), j + 1):
            s = self._snaps[h]
            if s.last < j:  # no record of D[h] is placed as late as j
                continue
            idx = np.flatnonzero(s.place == j)
            if len(idx):
                parts.append((h, s, idx))
        label = self._snaps[j].label
        if len(parts) == 1:
            h, s, idx = parts[0]
            c, r, hm = s.codes[idx], s.rows[idx], np.full(len(idx), h, dtype=np.int64)
        elif parts:
            c = np.concatenate([s.codes[idx] for _, s, idx in parts])
            r = np.concatenate([s.rows[idx] for _, s, idx in parts])
            hm = np.repeat(np.array([h for h, _, _ in parts], dtype=np.int64), [len(idx) for _, _, idx in parts])
        else:
            c, r, hm = np.zeros(0, dtype=np.int64), self._snaps[j].rows[:0], np.zeros(0, dtype=np.int64)
        if len(c):
            np.maximum.at(self._published_max_home(), c, hm)
        return j, label, c, r, hm, parts

    def _publish(self, j: int) -> PublishedSnapshot:
        before = self._published_max_home().copy()
        j, label, c, r, hm, parts = self._release(j)
        if self.verify and len(c):
            from tempanon.verify import check_timestamp_order

            # Theorem 1 against everything published before: the latest earlier home of each value
            prev = np.flatnonzero(before >= 0)
            check_timestamp_order(np.concatenate([before[prev], hm]), np.concatenate([np.full(len(prev), j - 1), np.full(len(c), j)]),
                                  np.concatenate([prev, c]))
        try:
            group = anatomy_groups(c, self.l, self._rng)
        except NotEligibleError as exc:
            raise _not_releasable(exc, [label], self.l) from exc
        perm = qit_order(group, self._rng)
        c, r, hm, group = c[perm], r[perm], hm[perm], group[perm]
        dist = j - hm
        out = PublishedSnapshot(j, label, r, hm, dist, c, group, float(self.mu[dist].sum()))
        if all(s.qi is not None for _, s, _ in parts) and self._snaps[j].qi is not None:
            frames = [s.qi.iloc[idx] for _, s, idx in parts]
            qi = pd.concat(frames, ignore_index=True).iloc[perm] if frames else self._snaps[j].qi.iloc[:0]
            values = np.array(self._values, dtype=object)[c] if len(c) else np.zeros(0, dtype=object)
            out.qit = qi.reset_index(drop=True).assign(group=group)
            out.st = sensitive_table(group, c, values, self.sensitive)
            if self.verify:
                from tempanon.verify import check_anatomy

                check_anatomy(out.qit, out.st, self.l, sensitive=self.sensitive, qi=self.qi, expected_values=pd.Series(values, dtype=object))
        self._next_pub = j + 1
        return out

    # ------------------------------------------------------------------ results
    @property
    def values(self) -> list:
        """The sensitive values seen so far, in code order (``None`` = missing)."""
        return list(self._values)

    def record_table(self) -> pd.DataFrame:
        """Per input record: ``row`` (its index label), ``home`` (snapshot index), ``snapshot`` (label),
        ``placed`` (snapshot index, -1 suppressed), ``published`` (label or missing), ``distance``,
        ``code``. Placements of snapshots not yet published may still change."""
        if not self._snaps:
            return pd.DataFrame(columns=["row", "home", "snapshot", "placed", "published", "distance", "code"])
        labels = np.array([s.label for s in self._snaps], dtype=object)
        home = np.repeat(np.arange(len(self._snaps), dtype=np.int64), [len(s.codes) for s in self._snaps])
        placed = np.concatenate([s.place for s in self._snaps])
        pub = np.where(placed >= 0, labels[np.maximum(placed, 0)], None)
        dist = np.where(placed >= 0, placed - home, -1)
        return pd.DataFrame(
            {
                "row": np.concatenate([s.rows for s in self._snaps]),
                "home": home,
                "snapshot": labels[home],
                "placed": placed,
                "published": pub,
                "distance": dist,
                "code": np.concatenate([s.codes for s in self._snaps]),
            }
        )

    def information_loss(self, table: pd.DataFrame | None = None) -> float:
        """Equation (2) of the current placement (final after :meth:`flush`)."""
        t = self.record_table() if table is None else table
        if len(t) == 0:
            return 0.0
        sup = t["placed"].to_numpy() < 0
        d = t["distance"].to_numpy()
        return float(self.mu[d[~sup]].sum() + self._beta[t["code"].to_numpy()[sup]].sum())

    def summary(self, table: pd.DataFrame | None = None) -> dict:
        """Totals and per-snapshot counts (call after :meth:`flush`); ``table``: the current
        :meth:`record_table`, if the caller has it already."""
        t = self.record_table() if table is None else table
        sup = t["placed"].to_numpy() < 0 if len(t) else np.zeros(0, dtype=bool)
        d = t["distance"].to_numpy() if len(t) else np.zeros(0, dtype=np.int64)
        moved = (~sup) & (d > 0)
        n_snap = len(self._snaps)
        home = t["home"].to_numpy() if len(t) else np.zeros(0, dtype=np.int64)
        placed = t["placed"].to_numpy() if len(t) else np.zeros(0, dtype=np.int64)
        size = np.bincount(home, minlength=n_snap)
        supp = np.bincount(home[sup], minlength=n_snap)
        pub_size = np.bincount(placed[~sup], minlength=n_snap)
        methods = [s.method for s in self.steps]
        return {
            "l": self.l,
            "window": self.w,
            "cost": self.cost.name,
            "defer": self.defer,
            "step": self.step,
            "step_cpu_seconds": self.step_cpu_seconds,
            "jit_compile_cpu_seconds": self.jit_compile_cpu_seconds,
            "steps_heuristic": sum(1 for s in self.steps if s.method == "fast" and s.certificate is None),
            "relays": self.relays,
            "relay_moves": self.chain_moves,
            "records": int(len(t)),
            "snapshots": n_snap,
            "information_loss": self.information_loss(t),
            "suppressed": int(sup.sum()),
            "repositioned": int(moved.sum()),
            "total_reposition_distance": int(d[moved].sum()),
            "max_reposition_distance": int(d[moved].max()) if moved.any() else 0,
            "steps_solved_by_ilp": methods.count("milp"),
            "steps_solved_combinatorially": len(methods) - methods.count("milp"),
            "steps_ilp_confirmed_combinatorial": sum(1 for s in self.steps if s.confirmed),
            "step_certificates": _counts(self.steps, "certificate"),
            "ilp_step_solvers": _counts(self.steps, "solver"),
            "final_step": None if self.final_step is None else (self.final_step.certificate or self.final_step.method),
            "warnings": self.warnings(),
            "per_snapshot": [
                {
                    "snapshot": s.label,
                    "size": int(size[i]),
                    "suppressed": int(supp[i]),
                    "published": i < self._next_pub,
                    "published_size": int(pub_size[i]),
                }
                for i, s in enumerate(self._snaps)
            ],
        }


def _counts(steps: list[StepStats], field: str) -> dict[str, int]:
    """How many steps have each value of ``field`` (``certificate`` or ``solver``), ``None`` left out."""
    out: dict[str, int] = {}
    for s in steps:
        key = getattr(s, field)
        if key is not None:
            out[key] = out.get(key, 0) + 1
    return out
