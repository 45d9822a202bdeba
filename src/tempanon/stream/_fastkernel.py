"""The compiled kernel of the fast step (see :mod:`tempanon.stream.fast`); imported only when that step
runs, because importing it imports numba (and compiles, or loads from numba's cache, on first call).
Without numba the same functions run as plain Python (correct, slow)."""

import numpy as np

try:
    from numba import njit

    def jit(fn):
        return njit(cache=True, nogil=True)(fn)

    def jit_nonrt(fn):
        # without numba's runtime (NRT): no reference counting of array arguments (45% of the kernel's
        # time at l = 3, w = 8, docs/benchmarks.md "Fast step: the same search, cheaper"). ``_nrt`` is
        # a flag of numba's own, not of its documented API: a function that would allocate does not
        # compile with it (so nothing here can leak), and a numba without the flag fails at the first
        # compile, caught by every fast-step test (pyproject pins numba >= 0.60; measured and tested with 0.68.1)
        return njit(cache=True, nogil=True, _nrt=False)(fn)

    def jit_inline(fn):
        # inlined into the caller at numba's IR level: a call of a compiled function with array
        # arguments costs an atomic reference count increment and decrement per array, which numba
        # removes only when the body is inlined (measured: most of the kernel's time before)
        return njit(cache=True, nogil=True, inline="always")(fn)

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - numba is a dependency
    def jit(fn):
        return fn

    jit_inline = jit
    jit_nonrt = jit
    HAVE_NUMBA = False

METHOD_INITIAL, METHOD_FAST = 0, 1
XFER_MAX_ACTIVE = 160
"""Level transfers (``XFER``) only in steps with at most this many active records: each candidate is a
flow over every active record, and on the large snapshots of the stops data (daily w >= 4, weekly) they
made the fast step slower than the exact step (weekly stops, l = 5, w = 8: 5,909 vs 17,166 records per
CPU-second end to end; with the dual bound, 2026-11-25 23:51, linear mu: 6,420 vs 17,951 step records
per CPU-second for +0.03% IL). Without this gate, daily and weekly stops at w >= 4 (linear mu): the IL
changed by -7.5% to +0.1% (daily l = 3, w = 8: 1,113 -> 1,029, the exact step 1,023) at x0.27-0.66 of
the step rate, below the exact step's in five of the eight l = 3, 5 cells; see
:data:`tempanon.stream.fast.XFER_MIN_W`, and ..."""
XFER_ANY_SIZE_MAX_W = 2
"""... except when ``w <= XFER_ANY_SIZE_MAX_W``: there a round has at most four candidates (``P = w + 1
<= 3``). Measured (docs/benchmarks.md, 2026-11-25 23:53, the `w = 2` cells of weekly use-of-force and of
the stops data, where steps have more than 160 active records): the IL of weekly stops, ``l = 3``, from
96 to 67 (the exact step's; the grid's largest ratio, 1.433, before), daily stops ``l = 3`` -1.7%, the
other cells -1.1% to +0.1%, at x0.59-1.07 of the step rate (all still above 120,000 records per
CPU-second)."""
CERT_NONE, CERT_FEWER, CERT_IL0, CERT_BOUND = 0, 1, 2, 3
_NOLIT = None
"""(A note, not a value.) Arguments passed from one compiled function to another are never literals
here (``np.int64(0)``, ``np.bool_(False)`` instead of ``0``, ``False``, also for variables that start
at a constant): numba types a call's constant argument, or a variable before its type is unified, as a
literal type (``Literal[int](0)``) and compiles the callee once more for each such signature, and
these versions cascade into their own callees. Measured (2026-11-26, cold cache): ``local_search``
was compiled 2 times, ``lift`` and ``empty`` 6 times each, ten functions in all more than once; the
cold compile of the kernel took 47.5 CPU-s."""
_EPS = 1e-9
WS_I_ROWS = 27
"""Integer scratch rows of :func:`local_search` (``steps`` allocates them once per batch)."""
WS_F_ROWS = 6
"""Float scratch rows of :func:`local_search`."""
POOL = 32
"""Entries of the step's dual pool (``DUAL_POOL``; the oldest overwritten first)."""
_TOL = 1e-5  # slack for the rounding in a dual bound (distances of size ~_BIG, each within _EPS)


@jit_inline
def refresh(n, M, cM, p, mv):
    mx = 0
    c = 0
    for u in range(mv):
        x = n[p, u]
        if x > mx:
            mx = x
            c = 1
        elif x == mx and x > 0:
            c += 1
    M[p] = mx
    cM[p] = c

@jit_inline
def inc(n, N, M, cM, H, p, u):
    """One more record of value ``u`` in snapshot ``p``: counts, the largest count ``M[p]`` and how many
    values reach it ``cM[p]`` kept up to date in O(1) through ``H[p, k]``, the number of values with
    ``k`` records in ``p`` (instead of a scan over the values)."""
    x = n[p, u] + 1
    n[p, u] = x
    N[p] += 1
    H[p, x - 1] -= 1
    H[p, x] += 1
    if x > M[p]:
        M[p] = x
        cM[p] = 1
    elif x == M[p]:
        cM[p] += 1


@jit_inline
def dec(n, N, M, cM, H, p, u):
    """One record of value ``u`` less in snapshot ``p`` (see :func:`inc`)."""
    x = n[p, u]
    n[p, u] = x - 1
    N[p] -= 1
    H[p, x] -= 1
    H[p, x - 1] += 1
    if x == M[p]:
        if cM[p] > 1:
            cM[p] -= 1
        else:
            M[p] = x - 1
            cM[p] = H[p, x - 1] if x > 1 else 0


@jit_inline
def removal_ok(n, N, M, cM, p, u, l):
    nm = M[p]
    if n[p, u] == M[p] and cM[p] == 1:
        nm = M[p] - 1
    return l * nm <= N[p] - 1

@jit_inline
def add_ok(n, N, M, p, u, l):
    mx = M[p]
    if n[p, u] + 1 > mx:
        mx = n[p, u] + 1
    return l * mx <= N[p] + 1

@jit_inline
def cost_of(i, opt, P, pr, hh, oldest, mu):
    if opt == P:
        return pr[i]
    return mu[oldest + opt - hh[i]]

@jit_inline
def by_value(na, v, mv, vstart, vidx, fill):
    """The records by value (a counting sort, stable): ``vidx[vstart[u]:vstart[u + 1]]`` are the records
    of value ``u`` in input order. ``fill``: scratch of ``mv`` entries."""
    for u in range(mv + 1):
        vstart[u] = 0
    for i in range(na):
        vstart[v[i] + 1] += 1
    for u in range(mv):
        vstart[u + 1] += vstart[u]
        fill[u] = vstart[u]  # (vstart[u] is final here)
    for i in range(na):
        vidx[fill[v[i]]] = i
        fill[v[i]] += 1


@jit_nonrt
def placement_il(na, P, o, pr, hh, oldest, mu):
    """The IL of the placements ``o`` (each record at its option's cost)."""
    il = 0.0
    for i in range(na):
        il += cost_of(i, o[i], P, pr, hh, oldest, mu)
    return il


@jit_nonrt
def move(n, N, M, cM, H, o, v, i, b, P, mv):
    a = o[i]
    u = v[i]
    if a < P:
        dec(n, N, M, cM, H, a, u)
    if b < P:
        inc(n, N, M, cM, H, b, u)
    o[i] = b

@jit_nonrt
def ok_after(n, N, M, cM, p, u1, e1, u2, e2, l):
    """Is snapshot ``p`` l-eligible after count changes ``e1`` of value ``u1`` and ``e2`` of ``u2``
    (``u = -1``: none; ``e`` = +-1)? O(1) from the largest count ``M[p]`` and how many values reach it
    ``cM[p]``; a scan only when a value at the maximum loses two records."""
    if u1 >= 0 and u1 == u2:
        e1 += e2
        u2 = -1
    tot = N[p]
    newmax = 0
    atm = 0
    mp = M[p]
    if u1 >= 0:
        tot += e1
        x = n[p, u1] + e1
        if x > newmax:
            newmax = x
        if n[p, u1] == mp:
            atm += 1
    if u2 >= 0:
        tot += e2
        x = n[p, u2] + e2
        if x > newmax:
            newmax = x
        if n[p, u2] == mp:
            atm += 1
    if mp > 0:
        if cM[p] - atm > 0:
            if mp > newmax:
                newmax = mp
        elif newmax < mp - 1:
            # every value at the maximum lost two records: the next largest count is unknown
            if u1 >= 0:
                n[p, u1] += e1
            if u2 >= 0:
                n[p, u2] += e2
            mx = 0
            for u in range(n.shape[1]):
                if n[p, u] > mx:
                    mx = n[p, u]
            if u1 >= 0:
                n[p, u1] -= e1
            if u2 >= 0:
                n[p, u2] -= e2
            newmax = mx
    return l * newmax <= tot


@jit_nonrt
def pair_ok(n, N, M, cM, o, v, i, b, j, d, P, mv, l):
    """Both moves (i -> b, then j -> d): are the touched snapshots l-eligible afterwards?"""
    a = o[i]
    c = o[j]
    ui = v[i]
    uj = v[j]
    # per touched snapshot its changes: a (ui, -1), b (ui, +1), c (uj, -1), d (uj, +1)
    if a < P:
        e2u = np.int64(-1)
        e2 = np.int64(0)
        if c == a:
            e2u = uj
            e2 = np.int64(-1)
        elif d == a:
            e2u = uj
            e2 = np.int64(1)
        if not ok_after(n, N, M, cM, a, ui, np.int64(-1), e2u, e2, l):
            return False
    if b < P:
        e2u = np.int64(-1)
        e2 = np.int64(0)
        if c == b:
            e2u = uj
            e2 = np.int64(-1)
        elif d == b:
            e2u = uj
            e2 = np.int64(1)
        if not ok_after(n, N, M, cM, b, ui, np.int64(1), e2u, e2, l):
            return False
    if c < P and c != a and c != b:
        if not ok_after(n, N, M, cM, c, uj, np.int64(-1), np.int64(-1), np.int64(0), l):
            return False
    if d < P and d != a and d != b:
        if not ok_after(n, N, M, cM, d, uj, np.int64(1), np.int64(-1), np.int64(0), l):
            return False
    return True


@jit_nonrt
def lift(n, N, M, cM, H, o, v, order, ogain, omult, nxt, nc, p, K, P, mv, l, mode, taken, prev, dst, keep, pr, hh, oldest, mu, lo, hi, na, vidx, vstart, info, scr, rng):
    """Fill snapshot ``p`` up to ``|D'[p]| >= l K`` with at most ``K`` records per value, candidates in
    ``order`` (gains ``ogain``, ``omult`` copies per entry chained in ``nxt``: :func:`fill_candidates`):
    every positive gain, then the least negative ones while too small.
    ``mode`` 0 (strict): a record is taken only if its source stays l-eligible; otherwise sources may
    break on the way, are repaired (exchange with a record taken from suppression; then mode 1 drains,
    mode 2 sheds, see :mod:`tempanon.stream.fast`) and every touched snapshot is checked at the end. Applied and its gain returned when it
    gains and every touched snapshot is l-eligible; else rolled back (returns 0). ``info[0]``: did the
    strict variant pass over a record because its source would break (if not, the other variants take
    the same records, break no source and gain the same)?"""
    strict = mode == 0
    info[0] = 0
    total = 0.0
    nt = 0
    stop = False
    for k in range(nc):
        j = order[k]
        gj = ogain[k]
        u = v[j]
        c = o[j]
        # the entry's interchangeable copies (``omult[k]``, chained in ``nxt``), one at a time: a copy
        # refused by the cap or by its source's eligibility refuses the others too (nothing changed)
        for _ in range(omult[k]):
            if gj <= _EPS and N[p] >= l * K:
                stop = True
                break
            if n[p, u] + 1 > K:
                break
            if strict and c < P and not removal_ok(n, N, M, cM, c, u, l):
                info[0] = 1
                break
            prev[nt] = c
            taken[nt] = j
            dst[nt] = p
            nt += 1
            if c < P:
                dec(n, N, M, cM, H, c, u)
            inc(n, N, M, cM, H, p, u)
            o[j] = p
            total += gj
            j = nxt[j]
        if stop:
            break
    if not strict:
        # repair a source left with too many records of its largest value: a record of that value taken
        # from suppression goes back, one of the same value placed in the source takes its place in p
        for k in range(nt):
            c = prev[k]
            if c >= P:
                continue
            first = True
            for k3 in range(k):
                if prev[k3] == c:
                    first = False
                    break
            if not first:
                continue  # (a source once: a second pass would find no more exchanges)
            while l * M[c] > N[c]:
                done = False
                for k2 in range(nt):
                    j = taken[k2]
                    u = v[j]
                    if prev[k2] != P or n[c, u] != M[c]:
                        continue
                    for a2 in range(vstart[u], vstart[u + 1]):  # the records of value u, input order
                        j2 = vidx[a2]
                        if o[j2] == c and lo[j2] <= p and p <= hi[j2]:
                            # j back to suppression, j2 from c to p
                            g1 = cost_of(j, P, P, pr, hh, oldest, mu) - cost_of(j, p, P, pr, hh, oldest, mu)
                            g2 = cost_of(j2, c, P, pr, hh, oldest, mu) - cost_of(j2, p, P, pr, hh, oldest, mu)
                            o[j] = P
                            o[j2] = p
                            dec(n, N, M, cM, H, c, u)
                            taken[k2] = j2
                            prev[k2] = c
                            total += g2 - g1
                            done = True
                            break
                    if done:
                        break
                if not done:
                    break
        if mode == 2:
            # still broken: shed records of the source's largest value, each to its best option that
            # stays l-eligible (or suppression), the cheapest loss first, until the source is l-eligible
            n_taken = nt
            for k in range(n_taken):
                c = prev[k]
                if c >= P:
                    continue
                if l * M[c] <= N[c]:
                    continue
                # the source's records in input order (only the records whose reach holds c: a range,
                # ``rng``)
                ns = 0
                for j2 in range(rng[0, c], rng[1, c]):
                    if o[j2] == c:
                        scr[ns] = j2
                        ns += 1
                while l * M[c] > N[c] and nt < na:
                    sj = -1
                    sd = P
                    sg = -1e300
                    for a2 in range(ns):
                        j2 = scr[a2]
                        u = v[j2]
                        if o[j2] != c or n[c, u] != M[c]:
                            continue
                        cc = cost_of(j2, c, P, pr, hh, oldest, mu)
                        g = cc - cost_of(j2, P, P, pr, hh, oldest, mu)
                        if g > sg:
                            sg = g
                            sj = j2
                            sd = P
                        for d in range(lo[j2], hi[j2] + 1):
                            if d == c or not add_ok(n, N, M, d, u, l):
                                continue
                            g = cc - cost_of(j2, d, P, pr, hh, oldest, mu)
                            if g > sg:
                                sg = g
                                sj = j2
                                sd = d
                    if sj < 0:
                        break
                    u = v[sj]
                    taken[nt] = sj
                    prev[nt] = c
                    dst[nt] = sd
                    nt += 1
                    dec(n, N, M, cM, H, c, u)
                    if sd < P:
                        inc(n, N, M, cM, H, sd, u)
                    o[sj] = sd
                    total += sg
        # still broken: drain the source, each of its records to its best other option (a snapshot that
        # stays l-eligible, or suppression); an empty snapshot is l-eligible
        n_taken = nt
        for k in range(n_taken):
            c = prev[k]
            if c >= P or l * M[c] <= N[c]:
                continue
            for j2 in range(rng[0, c], rng[1, c]):
                if o[j2] != c or nt >= na:
                    continue
                u = v[j2]
                cc = cost_of(j2, c, P, pr, hh, oldest, mu)
                bd = P
                bg = cc - cost_of(j2, P, P, pr, hh, oldest, mu)
                for d in range(lo[j2], hi[j2] + 1):
                    if d == c or not add_ok(n, N, M, d, u, l):
                        continue
                    g = cc - cost_of(j2, d, P, pr, hh, oldest, mu)
                    if g > bg:
                        bg = g
                        bd = d
                taken[nt] = j2
                prev[nt] = c
                dst[nt] = bd
                nt += 1
                dec(n, N, M, cM, H, c, u)
                if bd < P:
                    inc(n, N, M, cM, H, bd, u)
                o[j2] = bd
                total += bg
    ok = total > _EPS and l * M[p] <= N[p]
    if ok and not strict:
        for k in range(nt):
            c = prev[k]
            if c < P and l * M[c] > N[c]:
                ok = False
                break
            c = dst[k]
            if c < P and l * M[c] > N[c]:
                ok = False
                break
    if ok and keep:
        return total
    if not ok:
        total = 0.0
    for k in range(nt - 1, -1, -1):
        j = taken[k]
        c = prev[k]
        d = dst[k]
        u = v[j]
        if d < P:
            dec(n, N, M, cM, H, d, u)
        if c < P:
            inc(n, N, M, cM, H, c, u)
        o[j] = c
    return total


@jit_inline
def empty_bound(q, P, o, pr, hh, oldest, mu, lo, hi, rng):
    """At most what emptying snapshot ``q`` can gain (``EMPTY_BOUND``): each of its records at its
    cheapest other option, l-eligibility ignored (:func:`empty` moves each to its best other option that
    keeps the destination l-eligible)."""
    ub = 0.0
    for i in range(rng[0, q], rng[1, q]):
        if o[i] != q:
            continue
        cc = mu[oldest + q - hh[i]]
        low = pr[i]
        for d in range(lo[i], hi[i] + 1):
            if d != q:
                c = mu[oldest + d - hh[i]]
                if c < low:
                    low = c
        ub += cc - low
    return ub


@jit_nonrt
def empty(n, N, M, cM, H, o, v, q, P, mv, l, taken, prev, dst, keep, pr, hh, oldest, mu, lo, hi, na, rng):
    """Empty snapshot ``q``: each of its records (input order) to its best other option, a pending
    snapshot that stays l-eligible or suppression (an empty snapshot is l-eligible: Definition 1).
    Applied when ``keep`` and it gains; returns the gain (rolled back otherwise)."""
    total = 0.0
    nt = 0
    for i in range(rng[0, q], rng[1, q]):
        if o[i] != q:
            continue
        u = v[i]
        cc = cost_of(i, q, P, pr, hh, oldest, mu)
        bd = P
        bg = cc - pr[i]
        for d in range(lo[i], hi[i] + 1):
            if d == q or not add_ok(n, N, M, d, u, l):
                continue
            g = cc - cost_of(i, d, P, pr, hh, oldest, mu)
            if g > bg:
                bg = g
                bd = d
        taken[nt] = i
        dst[nt] = bd
        nt += 1
        dec(n, N, M, cM, H, q, u)
        if bd < P:
            inc(n, N, M, cM, H, bd, u)
        o[i] = bd
        total += bg
    if keep and total > _EPS:
        return total
    for k in range(nt - 1, -1, -1):
        i = taken[k]
        d = dst[k]
        u = v[i]
        if d < P:
            dec(n, N, M, cM, H, d, u)
        inc(n, N, M, cM, H, q, u)
        o[i] = q
    return total


@jit_nonrt
def fill_bound(n, N, p, K, l, v, order, ogain, omult, nc, tk, tv):
    """The most a selection of the candidates (``order``, gains ``ogain``, ``omult[k]`` interchangeable
    copies per entry: :func:`fill_candidates`) into snapshot ``p`` can gain with at most ``K`` records
    per value in ``p`` and ``|D'[p]| >= l K`` (sources' eligibility ignored): every positive gain within
    the caps, then the least negative ones until ``p`` is large enough; ``-inf`` when the candidates
    cannot fill it. ``tk`` (zeros, per value) is left zeroed."""
    need = l * K - N[p]
    cnt = 0
    g = 0.0
    nv = 0
    for k in range(nc):
        gk = ogain[k]
        if gk <= _EPS and cnt >= need:
            break
        u = v[order[k]]
        room = K - n[p, u] - tk[u]
        if room <= 0:
            continue
        t = omult[k] if omult[k] < room else room
        if gk <= _EPS and need - cnt < t:
            t = need - cnt
        if tk[u] == 0:
            tv[nv] = u
            nv += 1
        tk[u] += t
        cnt += t
        for _ in range(t):  # (added one copy at a time: the same rounding as per record)
            g += gk
    for k in range(nv):
        tk[tv[k]] = 0
    if cnt < need:
        return -1e300
    return g


@jit_nonrt
def stable_order(key, nc, idx, tmp):
    """``idx[:nc]``: the indices ``0 .. nc - 1`` sorted by ``key`` (stable: equal keys in index order,
    the same order as ``np.argsort(key[:nc], kind="mergesort")``), by a bottom-up merge sort in the
    scratch ``tmp`` (no allocation)."""
    for k in range(nc):
        idx[k] = k
    width = 1
    src_is_idx = True
    while width < nc:
        a = idx if src_is_idx else tmp
        b = tmp if src_is_idx else idx
        lo = 0
        while lo < nc:
            mid = min(lo + width, nc)
            hi = min(lo + 2 * width, nc)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if key[a[j]] < key[a[i]]:
                    b[k] = a[j]
                    j += 1
                else:
                    b[k] = a[i]
                    i += 1
                k += 1
            while i < mid:
                b[k] = a[i]
                i += 1
                k += 1
            while j < hi:
                b[k] = a[j]
                j += 1
                k += 1
            lo = hi
        src_is_idx = not src_is_idx
        width *= 2
    if not src_is_idx:
        for k in range(nc):
            idx[k] = tmp[k]


@jit_nonrt
def fill_candidates(p, na, P, o, v, lo, hi, n, pr, hh, oldest, mu, gain, key, cand, order, ogain, rng, srt, tmp, gid, nxt, cmult, omult, ehead, enext, etail,
                    merge):
    """The records that can reach snapshot ``p`` and are elsewhere, in ``order`` (gains ``ogain``): by
    decreasing gain, among equal gains first those whose value is the most frequent in their source.
    Records of one group (``gid``: the same value, home and price, so the same reach and the same cost
    of every option; by Theorem 1, Section IV, records of one value differ only by their timestamps,
    which the step's end puts in order) that sit in the same place are interchangeable, as the records
    of one value in LL-Reposition's pick under the per-value maximum ``m(s_i)`` (Section V.A, Example
    3): they are one entry, its first record in ``order``, the number of copies in ``omult``, the
    others chained after it in ``nxt`` (input order, ``-1`` at the end), so that the sort, the lifts
    and :func:`fill_bound` work on groups, not records (``merge``, ``fast.GROUPS``; without it every record is an entry of its own, as
    before 2026-11-27). Returns the number of entries and of records. ``srt``, ``tmp``, ``cmult``,
    ``etail``, ``enext``: scratch of at least ``nc`` entries; ``ehead``: per group."""
    for j in range(rng[0, p], rng[1, p]):
        ehead[gid[j]] = -1
    nc = np.int64(0)
    nr = np.int64(0)
    for j in range(rng[0, p], rng[1, p]):
        c = o[j]
        if c != p:
            nr += 1
            q = gid[j]
            e = ehead[q] if merge else np.int64(-1)
            while e >= 0 and o[cand[e]] != c:
                e = enext[e]
            nxt[j] = -1
            if e >= 0:  # a copy of entry e's records
                cmult[e] += 1
                nxt[etail[e]] = j
                etail[e] = j
                continue
            g = cost_of(j, c, P, pr, hh, oldest, mu) - cost_of(j, p, P, pr, hh, oldest, mu)
            gain[nc] = g
            key[nc] = -g - (1e-6 * n[c, v[j]] if c < P else 0.0)
            cand[nc] = j
            cmult[nc] = 1
            etail[nc] = j
            enext[nc] = ehead[q]
            ehead[q] = nc
            nc += 1
    if nc > 32:
        stable_order(key, nc, srt, tmp)
        for k in range(nc):
            order[k] = cand[srt[k]]
            ogain[k] = gain[srt[k]]
            omult[k] = cmult[srt[k]]
    else:
        # insertion sort (stable, as the mergesort; no allocation for the small candidate lists)
        for k in range(nc):
            kk = key[k]
            q = k
            while q > 0 and key[q - 1] > kk:
                key[q] = key[q - 1]
                order[q] = order[q - 1]
                ogain[q] = ogain[q - 1]
                omult[q] = omult[q - 1]
                q -= 1
            key[q] = kk
            order[q] = cand[k]
            ogain[q] = gain[k]
            omult[q] = cmult[k]
    return nc, nr


@jit_nonrt
def record_groups(na, v, hh, pr, lo, hi, gid):
    """``gid[i]``: the group of record ``i``, the same for records of the same value, home, price and
    reach (interchangeable: the same cost of every option), numbered from 0 in order of first record.
    The records come sorted by home (``steps``), so a record's group is found among the records of its
    home before it. Returns the number of groups."""
    ng = np.int64(0)
    for i in range(na):
        g = np.int64(-1)
        j = i - 1
        while j >= 0 and hh[j] == hh[i]:
            if v[j] == v[i] and pr[j] == pr[i] and lo[j] == lo[i] and hi[j] == hi[i]:
                g = gid[j]
                break
            j -= 1
        if g < 0:
            g = ng
            ng += 1
        gid[i] = g
    return ng


_BIG = 1e7  # penalty of a violated cap or size bound in the flow network (far above any IL change)


@jit_inline
def record_arcs(i, s, o, v, lo, hi, pr, hh, oldest, mu, P, mv, S, ea, eb, ec, er, ed):
    """The residual arcs of record ``i`` at positions ``s .. s + hi[i] - lo[i]`` (placed: to
    suppression, then to every other snapshot in its reach; suppressed: to every snapshot in its reach;
    ``hi - lo + 1`` arcs either way, so a record's arcs keep their place when it moves). Returns the
    smallest of their costs."""
    a = o[i]
    u = v[i]
    A = S if a == P else a * mv + u
    ca = pr[i] if a == P else mu[oldest + a - hh[i]]
    E = s
    mn = 1e300
    if a != P:
        ea[E] = A
        eb[E] = S
        c = pr[i] - ca
        ec[E] = c
        er[E] = i
        ed[E] = P
        E += 1
        if c < mn:
            mn = c
    for b in range(lo[i], hi[i] + 1):
        if b == a:
            continue
        ea[E] = A
        eb[E] = b * mv + u
        c = mu[oldest + b - hh[i]] - ca
        ec[E] = c
        er[E] = i
        ed[E] = b
        E += 1
        if c < mn:
            mn = c
    return mn


@jit_nonrt
def slot_arcs(p0, P, mv, l, k, n, N, nsup, ms, nm, spos, ea, eb, ec, er, big):
    """The arcs after the records': per pending snapshot ``p``, for each slot ``(p, u)`` in ``ms[:nm]``
    (the slots a record is in or can enter, in order; the others carry no flow and no cycle passes
    through them) its arc to ``Y_p`` and, when it holds records, back; ``Y_p -> T`` and, when ``p``
    holds records, back; then ``S -> T`` and, when records are suppressed, back. Written from snapshot
    ``p0`` on (the arcs before it are kept): ``spos[p]`` is the position of ``p``'s first arc and
    ``spos[P + 1 + p]`` the index in ``ms`` of its first slot (``spos[P]``, ``spos[2 P + 1]``: those of
    ``S -> T``), set for ``p > p0``. Returns the number of arcs."""
    X = P * mv
    Yb = X
    S = X + P
    T = S + 1
    E = spos[p0]
    j = spos[P + 1 + p0]
    for p in range(p0, P):
        spos[p] = E
        spos[P + 1 + p] = j
        end = (p + 1) * mv
        while j < nm and ms[j] < end:
            x = ms[j]
            c = n[p, x - p * mv]
            ea[E] = x
            eb[E] = Yb + p
            ec[E] = 0.0 if c < k[p] else big
            er[E] = -1
            E += 1
            if c > 0:
                ea[E] = Yb + p
                eb[E] = x
                ec[E] = -big if c > k[p] else 0.0
                er[E] = -1
                E += 1
            j += 1
        ea[E] = Yb + p
        eb[E] = T
        ec[E] = -big if N[p] < l * k[p] else 0.0
        er[E] = -1
        E += 1
        if N[p] > 0:
            ea[E] = T
            eb[E] = Yb + p
            ec[E] = 0.0 if N[p] > l * k[p] else big
            er[E] = -1
            E += 1
    spos[P] = E
    spos[2 * P + 1] = j
    ea[E] = S
    eb[E] = T
    ec[E] = 0.0
    er[E] = -1
    E += 1
    if nsup > 0:
        ea[E] = T
        eb[E] = S
        ec[E] = 0.0
        er[E] = -1
        E += 1
    return E


@jit_nonrt
def residual_arcs(na, P, mv, l, k, o, v, lo, hi, pr, hh, oldest, mu, n, N, ea, eb, ec, er, ed, dist, gs, gmin, ms, spos, big):
    """The residual network of the current placements for caps ``k`` (see :func:`cancel_cycles`):
    fills the arc arrays, returns the number of arcs. Record ``i``'s ``hi - lo + 1`` arcs from
    ``gs[i]`` (their smallest cost in ``gmin[i]``), then :func:`slot_arcs` (the slots a record is in or
    can enter listed in ``ms``, their number in ``gs[na + 1]``)."""
    X = P * mv
    S = X + P
    # residual arcs of the current placements
    E = np.int64(0)  # (np.int64, not 0: see _NOLIT)
    nsup = np.int64(0)
    for i in range(na):
        if o[i] == P:
            nsup += 1
        gs[i] = E
        gmin[i] = record_arcs(i, E, o, v, lo, hi, pr, hh, oldest, mu, P, mv, S, ea, eb, ec, er, ed)
        E += hi[i] - lo[i] + 1
    gs[na] = E
    # the slots a record is in or can enter, marked in ``dist`` (the callers reset it)
    for x in range(X):
        dist[x] = 0.0
    for i in range(na):
        u = v[i]
        for b in range(lo[i], hi[i] + 1):
            dist[b * mv + u] = 1.0
    nm = np.int64(0)
    for x in range(X):
        if dist[x] != 0.0:
            ms[nm] = x
            nm += 1
    gs[na + 1] = nm
    spos[0] = E
    spos[P + 1] = 0
    return slot_arcs(np.int64(0), P, mv, l, k, n, N, nsup, ms, nm, spos, ea, eb, ec, er, big)


@jit_inline
def flow_status(na, P, mv):
    """Where :func:`cancel_cycles` leaves, in its scratch ``ai`` after the arcs' positions, whether its
    last Bellman-Ford run converged (1: no cycle, ``dist`` holds the distances :func:`cap_gradient` would
    compute from zero labels on this network) and, next to it, the number of arcs."""
    return na + 2 + P * mv + 2 * P + 2


@jit_nonrt
def cancel_cycles(na, P, mv, l, k, o, v, lo, hi, pr, hh, oldest, mu, n, N, M, cM, H, ea, eb, ec, er, ed, dist, par, onpath, cyc, ai, af, max_cancel, big, stats, built):
    """Min-cost flow for fixed caps ``k[p]`` by cancelling negative cycles (Klein), from the current
    placements. The network of the exact step's cap form (docs/stream.md): record ``i`` to a slot
    ``(p, v_i)`` at ``mu`` or to suppression at ``pr_i``; slot ``(p, u)`` to snapshot ``p`` with
    capacity ``k[p]``; snapshot ``p`` to the sink with at least ``l k[p]``. Violations are allowed at a
    penalty ``_BIG`` per unit (a record beyond a cap; a record missing below the size bound), so every
    placement is a flow and a flow without a negative cycle is optimal for the penalized problem: with
    no penalty left it is the optimum for caps ``k`` (every snapshot l-eligible). Records are arcs
    between slots (``(a, u) -> (b, u)``, cost ``c_i(b) - c_i(a)``); a simple cycle moves each record
    at most once (Section V's LP- and LL-Repositions and every chain of them are such cycles). Returns
    the number of cycles cancelled.

    The network is built once (:func:`residual_arcs`); after a cycle only the moved records' arcs
    (in their places) and the slots' and snapshots' arcs (:func:`slot_arcs`) are rewritten: the same
    arcs in the same order as a new build, so the same cycles are found. ``ai``, ``af``: scratch
    (:func:`flow_workspace`). ``built``: the arcs are already those of the current placements and caps
    ``k`` (their number in ``ai[flow_status + 1]``; ``NET_REUSE``), not built here."""
    X = P * mv
    Yb = X
    S = X + P
    T = S + 1
    V = T + 1
    gs = ai[: na + 2]
    ms = ai[na + 2 : na + 2 + X]
    spos = ai[na + 2 + X : na + 2 + X + 2 * P + 2]
    gmin = af[:na]
    fin = flow_status(na, P, mv)
    cancelled = 0
    if built:
        E = ai[fin + 1]  # (NET_REUSE: the caller's network for the current placements and caps k)
    else:
        E = residual_arcs(na, P, mv, l, k, o, v, lo, hi, pr, hh, oldest, mu, n, N, ea, eb, ec, er, ed, dist, gs, gmin, ms, spos, big)
    ai[fin] = 0
    nm = gs[na + 1]
    nsup = np.int64(0)
    for i in range(na):
        if o[i] == P:
            nsup += 1
    while cancelled < max_cancel:
        # Bellman-Ford from a virtual source (every distance 0), parent graph checked for a cycle
        for x in range(V):
            dist[x] = 0.0
            par[x] = -1
        found = -1
        for it in range(V):
            changed = False
            last = -1
            for e in range(E):
                d = dist[ea[e]] + ec[e]
                if d < dist[eb[e]] - _EPS:
                    dist[eb[e]] = d
                    par[eb[e]] = e
                    changed = True
                    last = eb[e]
            if not changed:
                ai[fin] = 1
                ai[fin + 1] = E
                break
            # a cycle in the parent graph through the last relaxed node's ancestors? (``onpath`` holds
            # the pass that visited a node: no reset)
            mark = cancelled * (V + 1) + it + 1
            x = last
            steps = 0
            while x >= 0 and onpath[x] != mark and steps <= V:
                onpath[x] = mark
                e = par[x]
                x = ea[e] if e >= 0 else -1
                steps += 1
            if x >= 0 and onpath[x] == mark:
                found = x
                break
        if found < 0:
            break
        # the cycle's arcs (parent pointers from found back to found); its cost must be negative
        nc = 0
        x = found
        tot = 0.0
        while True:
            e = par[x]
            cyc[nc] = e
            nc += 1
            tot += ec[e]
            x = ea[e]
            if x == found or nc > V:
                break
        if tot >= -_EPS or nc > V:
            stats[42] += 1  # a cycle of the parent graph that is not negative (rounding): stopped unproven
            break
        p0 = P  # the first snapshot whose slot arcs change
        for z in range(nc):
            e = cyc[z]
            i = er[e]
            if i >= 0:
                b = ed[e]
                a = o[i]
                if a == P:
                    nsup -= 1
                elif a < p0:
                    p0 = a
                if b == P:
                    nsup += 1
                elif b < p0:
                    p0 = b
                move(n, N, M, cM, H, o, v, i, b, P, mv)
                # the moved record's arcs, in their place (only record arcs follow in this cycle: a
                # simple cycle moves a record once, and a slot arc is not read again)
                gmin[i] = record_arcs(i, gs[i], o, v, lo, hi, pr, hh, oldest, mu, P, mv, S, ea, eb, ec, er, ed)
        E = slot_arcs(p0, P, mv, l, k, n, N, nsup, ms, nm, spos, ea, eb, ec, er, big)
        cancelled += 1
    return cancelled


@jit_nonrt
def cap_gradient(na, P, mv, l, k, o, v, lo, hi, pr, hh, oldest, mu, n, N, ea, eb, ec, er, ed, dist, ai, af, G, rev, big, build):
    """A linear bound on what changing the caps can gain (LP duality), for placements that are a
    min-cost flow for caps ``k`` (no negative cycle): the distances ``d`` of Bellman-Ford on the
    residual network are a feasible dual, feasible for every cap vector, so by weak duality the optimum
    for caps ``k'`` is at least ``IL - sum_p (k'_p - k_p) G[p]``, with ``G[p] = sum_u max(0, d[Y_p] -
    d[(p, u)]) - l (d[Y_p] - d[T])`` (the duals of the slot caps ``(p, u) -> Y_p`` and of the size bound
    ``Y_p -> T``; the penalty's constant ``_BIG l k_p`` cancels). So a cap change gains at most ``sum_p
    (k'_p - k_p) G[p]``: a level transfer ``p + 1``, ``q - 1`` at most ``G[p] - G[q]``. Returns False
    (``G`` unset) when the network has a negative cycle (the placements are not optimal for ``k``).
    ``build``: build the network (its number of arcs then left in ``ai[flow_status + 1]``); without, the
    arcs in the workspace are this network already (``NET_REUSE``)."""
    X = P * mv
    Yb = X
    S = X + P
    T = S + 1
    V = T + 1
    fin = flow_status(na, P, mv)
    if build:
        E = residual_arcs(na, P, mv, l, k, o, v, lo, hi, pr, hh, oldest, mu, n, N, ea, eb, ec, er, ed, dist, ai[: na + 2],
                          af[:na], ai[na + 2 : na + 2 + X], ai[na + 2 + X : na + 2 + X + 2 * P + 2], big)
        ai[fin + 1] = E
    else:
        E = ai[fin + 1]  # (NET_REUSE: the network of the current placements and caps k is built)
    for x in range(V):
        dist[x] = 0.0
    conv = False
    for it in range(V + 1):
        changed = False
        if rev:
            # distances to a virtual sink, negated: d[a] >= d[b] - c
            for e in range(E):
                d = dist[eb[e]] - ec[e]
                if d > dist[ea[e]] + _EPS:
                    dist[ea[e]] = d
                    changed = True
        else:
            for e in range(E):
                d = dist[ea[e]] + ec[e]
                if d < dist[eb[e]] - _EPS:
                    dist[eb[e]] = d
                    changed = True
        if not changed:
            conv = True
            break
    if not conv:
        return False
    dual_gradient(P, mv, l, E, ea, eb, er, dist, G)
    return True


@jit_nonrt
def dual_gradient(P, mv, l, E, ea, eb, er, dist, G):
    """``G`` of :func:`cap_gradient` from converged distances ``dist`` of the network's ``E`` arcs."""
    X = P * mv
    Yb = X
    T = X + P + 1
    for p in range(P):
        G[p] = -l * (dist[Yb + p] - dist[T])
    for e in range(E):
        x = ea[e]
        if er[e] < 0 and x < X and eb[e] == Yb + x // mv:
            z = dist[eb[e]] - dist[x]
            if z > 0.0:
                G[x // mv] += z


@jit
def flow_workspace_sized(emax, V):
    """The arrays of :func:`flow_workspace` for at most ``emax`` arcs and ``V`` nodes."""
    return (np.empty(emax, dtype=np.int64), np.empty(emax, dtype=np.int64), np.empty(emax), np.empty(emax, dtype=np.int64),
            np.empty(emax, dtype=np.int64), np.empty(V), np.empty(V, dtype=np.int64), np.zeros(V, dtype=np.int64),
            np.empty(V + 2, dtype=np.int64), np.empty(emax, dtype=np.int64), np.empty(emax), np.empty(4 * V, dtype=np.int64))


@jit
def flow_workspace(na, P, mv, w):
    """The arrays :func:`cancel_cycles` works in (arcs: ``ea, eb, ec, er, ed``; nodes: ``dist, par,
    onpath``; ``cyc``; the scratch ``ai``, ``af`` of the arcs' positions, the records' smallest arc costs
    and the nodes' change times; ``hw``: :func:`hall_tables` and :func:`caps_infeasible`), sized for ``na``
    records, ``P`` snapshots, ``mv`` values."""
    emax = na * (w + 3) + 2 * P * mv + 2 * P + 6
    V = P * mv + P + 2
    return (np.empty(emax, dtype=np.int64), np.empty(emax, dtype=np.int64), np.empty(emax), np.empty(emax, dtype=np.int64),
            np.empty(emax, dtype=np.int64), np.empty(V), np.empty(V, dtype=np.int64), np.zeros(V, dtype=np.int64),
            np.empty(V + 2, dtype=np.int64), np.empty(emax, dtype=np.int64), np.empty(emax), np.empty(4 * V, dtype=np.int64))


@jit_nonrt
def hall_tables(na, P, mv, v, lo, hi, hw):
    """The tables of :func:`caps_infeasible` (they depend only on the records' values and reaches):
    ``hw[b mv + u]`` the records of value ``u`` that can be in snapshot ``b`` (``lo <= b <= hi``),
    ``hw[P mv + b mv + u]`` those whose reach starts at ``b``."""
    X = P * mv
    for x in range(2 * X):
        hw[x] = 0
    for i in range(na):
        u = v[i]
        hw[X + lo[i] * mv + u] += 1
        for b in range(lo[i], hi[i] + 1):
            hw[b * mv + u] += 1


@jit_inline
def run_extend(Rq, Sq, hw, X, mv, a, b, kb):
    """The cut of the run ``a..b - 1`` extended by snapshot ``b`` with cap ``kb`` (:func:`caps_infeasible`):
    per value ``u``, ``Rq[u]`` the records that can be in the run, ``Sq[u]`` the sum of ``min(cap,
    records that can be in r)`` over its snapshots ``r`` (``hw``: :func:`hall_tables`)."""
    for u in range(mv):
        if b > a:
            Rq[u] += hw[X + b * mv + u]
        c = hw[b * mv + u]
        Sq[u] += c if c < kb else kb


@jit_nonrt
def caps_infeasible(P, mv, l, k, p, q, hw):
    """True when no placement meets caps ``k`` (every value at most ``k[r]`` times in snapshot ``r``, every
    snapshot at least ``l k[r]`` records: a flow of :func:`cancel_cycles` without penalty), proved by a
    cut (Hall's condition): for a run ``Q = a..b`` of pending snapshots, the records of value ``u`` in
    ``Q`` are at most those that can be in ``Q`` and at most ``sum_{r in Q} min(k[r], records of u that
    can be in r)``; their sum over the values must reach ``sum_{r in Q} l k[r]``. Only the runs through
    ``p`` or ``q`` (the snapshots whose caps differ from the levels, for which the current placements
    are such a placement) are checked. False says nothing (the caps may still be infeasible). ``hw``:
    :func:`hall_tables`, then ``2 mv`` entries of scratch."""
    X = P * mv
    Rq = hw[2 * X : 2 * X + mv]
    Sq = hw[2 * X + mv : 2 * X + 2 * mv]
    top = p if p > q else q
    bot = p if p < q else q
    for a in range(top + 1):
        for u in range(mv):
            Rq[u] = hw[a * mv + u]
            Sq[u] = 0
        need = 0
        for b in range(a, P):
            need += l * k[b]
            run_extend(Rq, Sq, hw, X, mv, a, b, k[b])
            if b >= bot:
                tot = 0
                for u in range(mv):
                    tot += Rq[u] if Rq[u] < Sq[u] else Sq[u]
                    if tot >= need:
                        break
                if tot < need:
                    return True
    return False


@jit_nonrt
def hall_slack(P, mv, l, M, hw):
    """For the levels ``M`` as caps, per run ``a..b`` of pending snapshots, how far :func:`caps_infeasible`'s
    cut is above its need (``hw[2 X + 2 mv + a P + b]``, ``X = P mv``), and per snapshot ``r`` the values
    that can have ``M[r]`` records in it (``hw[2 X + 2 mv + P P + r]``): lowering ``r``'s cap by one
    lowers a run's cut by at most that many, raising one never lowers it, so a candidate whose every run
    keeps a non-negative slack by these bounds passes :func:`caps_infeasible` (which is then not run:
    the same answers)."""
    X = P * mv
    Rq = hw[2 * X : 2 * X + mv]
    Sq = hw[2 * X + mv : 2 * X + 2 * mv]
    base = 2 * X + 2 * mv
    for r in range(P):
        d = 0
        for u in range(mv):
            if hw[r * mv + u] >= M[r]:
                d += 1
        hw[base + P * P + r] = d
    for a in range(P):
        for u in range(mv):
            Rq[u] = hw[a * mv + u]
            Sq[u] = 0
        need = 0
        for b in range(a, P):
            need += l * M[b]
            run_extend(Rq, Sq, hw, X, mv, a, b, M[b])
            tot = 0
            for u in range(mv):
                tot += Rq[u] if Rq[u] < Sq[u] else Sq[u]
            hw[base + a * P + b] = tot - need


@jit_nonrt
def hall_sure(P, mv, l, p, q, D, hw):
    """True when every run through ``p`` or ``q`` keeps a non-negative slack by :func:`hall_slack`'s bounds
    for the caps ``M`` with ``p`` one higher and ``q`` one lower (``D``: the values that can have ``M[q]``
    records in ``q``)."""
    base = 2 * P * mv + 2 * mv
    top = p if p > q else q
    bot = p if p < q else q
    for a in range(top + 1):
        for b in range(a if a > bot else bot, P):
            x = hw[base + a * P + b]
            if a <= p and p <= b:
                x -= l
            if a <= q and q <= b:
                x += l - D
            if x < 0:
                return False
    return True


@jit_nonrt
def flow_polish(na, P, mv, l, o, v, lo, hi, pr, hh, oldest, mu, n, N, M, cM, H, fw, k, big, stats):
    """The ``FLOW`` part of the local search: the min-cost flow for the current levels (caps ``k[p] =
    M[p]``, :func:`cancel_cycles`) from the current placements, which are a flow without penalty for
    these caps, so the result has none either (every snapshot stays l-eligible) and its IL is not
    higher. ``fw``: :func:`flow_workspace`; ``k``: scratch of ``P`` entries. Returns the number of cycles
    cancelled."""
    ea, eb, ec, er, ed, dist, par, onpath, cyc, ai, af, hw = fw
    onpath[:] = 0  # (cancel_cycles marks visits by call-local numbers)
    for p in range(P):
        k[p] = M[p]
    return cancel_cycles(na, P, mv, l, k, o, v, lo, hi, pr, hh, oldest, mu, n, N, M, cM, H, ea, eb, ec, er, ed, dist, par, onpath, cyc, ai, af, 4 * na + 10, big, stats, np.bool_(False))


@jit_nonrt
def xfer_start(na, P, mv, l, k, p, q, o, v, lo, hi, pr, hh, oldest, mu, n, N, M, cM, H):
    """A start for a level-transfer candidate's flow (``XFER_START``): greedy moves toward its caps
    ``k`` (``k[p]`` one above the level of ``p``, ``k[q]`` one below that of ``q``), so that the cycle
    cancelling, which reaches an optimum for the caps from any start, has fewer cycles left (each
    cycle is a Bellman-Ford run over every arc; from the current placements a candidate took ~10-19 of
    them at ``w = 8``, docs/benchmarks.md): each value of ``q`` above ``k[q]`` sends records out, the one
    whose best option within the caps costs least extra first; then ``p`` takes the records that gain
    most (from suppression, or from a snapshot above its size bound ``l k``; within ``p``'s cap) until
    ``|D'[p]| >= l k[p]``. Allocates nothing; ``O(na (w + 2))`` per record moved."""
    for u in range(mv):
        while n[q, u] > k[q]:
            bi = np.int64(-1)
            bd = np.int64(-1)
            bx = np.inf
            for i in range(na):
                if o[i] != q or v[i] != u:
                    continue
                cq = cost_of(i, q, P, pr, hh, oldest, mu)
                for b in range(lo[i], hi[i] + 2):
                    if b == hi[i] + 1:
                        b = P
                    if b == q or (b < P and n[b, u] >= k[b]):
                        continue
                    d = cost_of(i, b, P, pr, hh, oldest, mu) - cq
                    if d < bx:
                        bx = d
                        bi = i
                        bd = b
            if bi < 0:
                break
            move(n, N, M, cM, H, o, v, bi, bd, P, mv)
    while N[p] < l * k[p]:
        bi = np.int64(-1)
        bx = -np.inf
        for i in range(na):
            a = o[i]
            if a == p or lo[i] > p or hi[i] < p or n[p, v[i]] >= k[p]:
                continue
            if a < P and N[a] <= l * k[a]:
                continue
            g = cost_of(i, a, P, pr, hh, oldest, mu) - cost_of(i, p, P, pr, hh, oldest, mu)
            if g > bx:
                bx = g
                bi = i
        if bi < 0:
            break
        move(n, N, M, cM, H, o, v, bi, p, P, mv)


@jit_inline
def pool_add(pk, pf, pg, npool, P, k, f, G):
    """Keeps the dual ``G`` of the flow optimum for caps ``k`` (penalized IL ``f``) in the step's pool
    (rows of ``pk``, ``pf``, ``pg``; the oldest overwritten first); returns its row."""
    e = npool % pk.shape[0]
    pf[e] = f
    for r in range(P):
        pk[e, r] = k[r]
        pg[e, r] = G[r]
    return e


@jit_inline
def pool_base(pk, pf, pg, e, il, M, P):
    """The part of pool row ``e``'s bound on a transfer candidate's gain (caps ``M + e_p - e_q``) that
    does not depend on ``p``, ``q``: the bound is this plus ``pg[e, p] - pg[e, q]`` (weak duality: the
    optimum for caps ``k''`` is at least ``f - sum (k'' - k) G``)."""
    base = il - pf[e]
    for r in range(P):
        base += (M[r] - pk[e, r]) * pg[e, r]
    return base


@jit_nonrt
def xfer_search(na, P, mv, l, o, v, lo, hi, pr, hh, oldest, mu, n, N, M, cM, H, stats, prune, hall, reach, fw, k, save, best_o, cnt, G, G2, gmin, big, ordered, xc, xb, xo, start, reuse, netreuse, duals3, G3, xt, pool, pk, pf, pg):
    """Level transfers (``XFER``): the levels as caps ``k = M`` with one pending snapshot one level
    higher and another at most ``reach`` snapshots away one lower; each such candidate solved as the
    min-cost flow for its caps by :func:`cancel_cycles` from the current placements (without penalty
    left: optimal for those caps, every snapshot l-eligible); the best candidate that lowers the IL
    applied, until none does. A candidate is applied only when it lowers the IL by more than ``gmin``
    (``_EPS``; 0.5 with whole-number costs and ``WHOLE_GAINS``: then only a change of the true IL
    counts, not of the ties' perturbation alone, see :func:`local_search`). ``fw``:
    :func:`flow_workspace`; scratch ``k``, ``G``, ``G2`` (``P`` entries), ``save``, ``best_o``
    (``na``), ``cnt`` (``mv``, zeros, left zeroed); ``xc``, ``xb``, ``xo``: a round's candidates, their
    bounds and their order (``P (2 reach + 1)`` entries). ``big``: the flows' penalty (:func:`penalty`);
    ``ordered``: ``XFER_ORDER`` (candidates by decreasing bound); ``start``: ``XFER_START`` (each flow
    from :func:`xfer_start`); ``reuse``: ``DUAL_REUSE`` (the first round's forward dual from the flow
    polish that just ran, ``k`` on entry its caps); ``netreuse``: ``NET_REUSE`` (a round's network built
    once, patched per candidate); ``duals3``: ``XFER_DUALS`` (later candidates also bounded by each solved
    candidate's dual, in scratch ``G3`` of ``P`` entries; ``xt`` the tightened bounds, like ``xb``);
    ``pool``: ``DUAL_POOL`` (every round's candidates bounded by all of the step's duals, kept in rows of
    ``pk`` (caps), ``pf`` (penalized IL) and ``pg`` (gradient) by :func:`pool_add`, the oldest overwritten
    first: each round's two and each solved candidate's but a round's last).
    Returns the IL."""
    ea, eb, ec, er, ed, dist, par, onpath, cyc, ai, af, hw = fw
    X = P * mv
    S = X + P
    gs = ai[: na + 2]  # the network's positions (residual_arcs)
    ms = ai[na + 2 : na + 2 + X]
    spos = ai[na + 2 + X : na + 2 + X + 2 * P + 2]
    il = placement_il(na, P, o, pr, hh, oldest, mu)
    if hall > 0:
        hall_tables(na, P, mv, v, lo, hi, hw)
    for p in range(P):
        G[p] = 0.0
        G2[p] = 0.0
    for u in range(mv):
        cnt[u] = 0
    rnd = 0
    npool = 0  # the step's duals (caps, penalized IL, gradient), rows of pk, pf, pg
    if pk.shape[1] < P:
        pool = False
        duals3 = False
    # DUAL_REUSE only if the flow polish's caps (``k`` on entry) are still the levels
    if reuse:
        for r in range(P):
            if k[r] != M[r]:
                reuse = False
    while True:
        for i in range(na):
            save[i] = o[i]
        best = il
        have = False
        for r in range(P):
            k[r] = M[r]
        # two duals of the flow for the current levels (XFER_BOUND): a candidate neither says can gain
        # more than the best one so far is not solved (the results are the same as without)
        # the runs' slack for the levels (caps_infeasible is run only where it can fail)
        sure_ok = hall > 0 and len(hw) >= 2 * P * mv + 2 * mv + P * P + P
        if sure_ok:
            hall_slack(P, mv, l, M, hw)
        fin = flow_status(na, P, mv)
        built = False
        if prune and reuse and rnd == 0 and ai[fin] == 1:
            # DUAL_REUSE: the flow polish just ended with a Bellman-Ford run from zero labels that
            # converged on this same network (same placements, caps M): its distances are the ones
            # cap_gradient would compute
            dual_gradient(P, mv, l, ai[fin + 1], ea, eb, er, dist, G)
            okG = True
            built = True
            stats[44] += 1
        else:
            okG = prune and cap_gradient(na, P, mv, l, k, o, v, lo, hi, pr, hh, oldest, mu, n, N, ea, eb, ec, er, ed, dist, ai, af, G, np.bool_(False), big, np.bool_(True))
            built = prune
        rnd += 1
        if okG:
            okG = cap_gradient(na, P, mv, l, k, o, v, lo, hi, pr, hh, oldest, mu, n, N, ea, eb, ec, er, ed, dist, ai, af, G2, np.bool_(True), big, np.bool_(not netreuse))
        if netreuse and not built:
            ai[fin + 1] = residual_arcs(na, P, mv, l, k, o, v, lo, hi, pr, hh, oldest, mu, n, N, ea, eb, ec, er, ed, dist, gs,
                                        af[:na], ms, spos, big)
        # the candidates (p up, q down) that pass the cheap tests, in index order, with their bound
        nc = 0
        for p in range(P):
            # a necessary condition for level M[p] + 1 at p: the records that can be in p, at most
            # M[p] + 1 per value, are at least l (M[p] + 1) (Definition 1)
            K = M[p] + 1
            if l * K > N[p] + na:
                continue
            tot = 0
            for i in range(na):
                if lo[i] <= p and p <= hi[i]:
                    if cnt[v[i]] < K:
                        tot += 1
                    cnt[v[i]] += 1
            for i in range(na):
                cnt[v[i]] = 0
            if tot < l * K:
                continue
            for q in range(max(0, p - reach), min(P, p + reach + 1)):
                if q == p or M[q] == 0:
                    continue
                xc[nc] = p * P + q
                xb[nc] = min(G[p] - G[q], G2[p] - G2[q]) if okG else np.inf
                xo[nc] = nc
                nc += 1
        if pool and okG:
            # DUAL_POOL: the round's two duals join the step's pool; every candidate's bound is the
            # least over the pool (each entry a dual of the same step problem, valid for every caps)
            pool_add(pk, pf, pg, npool, P, M, il, G)
            pool_add(pk, pf, pg, npool + 1, P, M, il, G2)
            npool += 2
            for e in range(min(npool, pk.shape[0])):
                base = pool_base(pk, pf, pg, e, il, M, P)
                for c in range(nc):
                    p = xc[c] // P
                    q = xc[c] % P
                    b2 = base + pg[e, p] - pg[e, q]
                    if b2 < xb[c]:
                        xb[c] = b2
        # XFER_ORDER: the candidates by decreasing bound (ties in index order), so that the first one
        # whose bound cannot beat the best so far ends the round; among equal ILs the first candidate in
        # index order is kept, as without the order
        if ordered and okG:
            for a in range(1, nc):
                x = xo[a]
                z = a
                while z > 0 and xb[xo[z - 1]] < xb[x]:
                    xo[z] = xo[z - 1]
                    z -= 1
                xo[z] = x
        bc = nc
        for z in range(nc):
            xt[z] = xb[z]
        for z in range(nc):
            c = xo[z]
            p = xc[c] // P
            q = xc[c] % P
            for r in range(P):
                k[r] = M[r]
            k[p] += 1
            k[q] -= 1
            if okG and xb[c] + _TOL <= (il - best + _EPS if have else gmin):
                if ordered:
                    stats[38] += nc - z
                    break
                stats[38] += 1
                continue
            if okG and duals3 and xt[c] + _TOL <= (il - best + _EPS if have else gmin):
                stats[45] += 1  # XFER_DUALS: skipped by a solved candidate's dual
                continue
            # caps that no placement meets are not solved (the flow would end with a penalty and
            # the candidate be rejected below: the same results, fewer flows); hall = 2 solves them
            # anyway and counts in stats[40] any that was not rejected (a test: never)
            skip = False
            if hall > 0:
                if not (sure_ok and hall_sure(P, mv, l, np.int64(p), np.int64(q), hw[2 * P * mv + 2 * mv + P * P + q], hw)):
                    skip = caps_infeasible(P, mv, l, k, np.int64(p), np.int64(q), hw)
            if skip:
                stats[39] += 1
                if hall == 1:
                    continue
            if start:
                xfer_start(na, P, mv, l, k, np.int64(p), np.int64(q), o, v, lo, hi, pr, hh, oldest, mu, n, N, M, cM, H)
            if netreuse:
                # NET_REUSE: the round's network, patched: the arcs of the records the start moved, and
                # the slots' arcs for the caps k (the same arcs in the same order as a new build)
                nsup = np.int64(0)
                for i in range(na):
                    if o[i] != save[i]:
                        af[i] = record_arcs(i, gs[i], o, v, lo, hi, pr, hh, oldest, mu, P, mv, S, ea, eb, ec, er, ed)
                    if o[i] == P:
                        nsup += 1
                ai[fin + 1] = slot_arcs(np.int64(0), P, mv, l, k, n, N, nsup, ms, gs[na + 1], spos, ea, eb, ec, er, big)
            onpath[:] = 0  # (cancel_cycles marks visits by call-local numbers)
            stats[43] += cancel_cycles(na, P, mv, l, k, o, v, lo, hi, pr, hh, oldest, mu, n, N, M, cM, H, ea, eb, ec, er, ed, dist, par, onpath, cyc, ai, af, 4 * na + 10, big, stats, np.bool_(netreuse))
            stats[36] += 1
            if okG and duals3 and ai[fin] == 1 and z + 1 < nc:
                # XFER_DUALS: the candidate's converged distances are a dual of every cap vector too;
                # with its penalized IL f (violations at ``big``), a candidate with caps k'' gains at
                # most il - f + sum (k'' - k) G3
                dual_gradient(P, mv, l, ai[fin + 1], ea, eb, er, dist, G3)
                f = placement_il(na, P, o, pr, hh, oldest, mu)
                for r in range(P):
                    if N[r] < l * k[r]:
                        f += big * (l * k[r] - N[r])
                    for u in range(mv):
                        if n[r, u] > k[r]:
                            f += big * (n[r, u] - k[r])
                pool_add(pk, pf, pg, npool, P, k, f, G3)
                npool += 1
                # (M now holds the candidate's levels: its caps differ from a later candidate's by
                # e_p2 - e_q2 - e_p + e_q)
                for z2 in range(z + 1, nc):
                    c2 = xo[z2]
                    b2 = il - f + G3[xc[c2] // P] - G3[xc[c2] % P] - G3[p] + G3[q]
                    if b2 < xt[c2]:
                        xt[c2] = b2
            # accepted only as the flow optimum for caps k (no penalty left: every count within
            # its cap, every size at least l k), so that cap_gradient bounds its gain
            ok = True
            for r in range(P):
                if M[r] > k[r] or N[r] < l * k[r]:
                    ok = False
                    break
            if skip and ok:
                stats[40] += 1
            if not ok:
                stats[41] += 1
            if ok:
                il2 = placement_il(na, P, o, pr, hh, oldest, mu)
                if il2 < il - gmin and (il2 < best - _EPS or (have and ordered and il2 <= best + _EPS and c < bc)):
                    best = il2
                    have = True
                    bc = c
                    for i in range(na):
                        best_o[i] = o[i]
            for i in range(na):
                if o[i] != save[i]:
                    move(n, N, M, cM, H, o, v, i, save[i], P, mv)
                    if netreuse:
                        af[i] = record_arcs(i, gs[i], o, v, lo, hi, pr, hh, oldest, mu, P, mv, S, ea, eb, ec, er, ed)
        if not have:
            break
        for i in range(na):
            if o[i] != best_o[i]:
                move(n, N, M, cM, H, o, v, i, best_o[i], P, mv)
        stats[37] += 1
        il = best
    return il


@jit_inline
def penalty(na, P, pr, mu, flags):
    """The flows' penalty per unit of a violated cap or size bound (:func:`cancel_cycles`). With
    ``PENALTY_BOUND`` in ``flags``: one more than the largest IL a placement of the step can have (every
    record at its dearest option), so that a flow with a violation (at least one unit: the network is
    integral) always costs more than a placement without: where one exists, the penalized optimum has
    none, as with any larger penalty. Small, so that distances stay exact to well below ``_EPS``
    (at ``_BIG = 1e7`` one unit in the last place is 1.9e-9, above ``_EPS``: Bellman-Ford then found
    "cycles" of rounding only and the cancelling stopped without its proof of optimality, counted in
    ``stats[42]``). Without the flag: ``_BIG``."""
    if flags & 2048 == 0:
        return _BIG
    mx = 0.0
    for d in range(len(mu)):
        if mu[d] > mx:
            mx = mu[d]
    tot = 1.0
    for i in range(na):
        tot += pr[i] if pr[i] > mx else mx
    return tot


@jit_inline
def beaten(x, bt, key, bkey):
    """Can a lift of gain at most ``x``, at ``key`` in (snapshot, level, variant) order, not replace the
    best so far (gain ``bt``, key ``bkey``; -1: none yet, ``bt`` the least gain that counts)? A lower
    gain, or an equal one later in that order (in index order every key comes after ``bkey``, so this
    is ``x <= bt`` there)."""
    return x < bt or (x == bt and (bkey < 0 or key > bkey))


@jit_nonrt
def local_search(na, P, mv, l, w, oldest, t, hh, v, o, pr, mu, n, N, M, cM, H, lo, hi, lb, max_rounds, pair_budget, lift_levels, stats, flags, ws_i, ws_f, xfer_reach, fw, whole, xc, xb, xo, xt, pk, pf, pg):
    """Best-improvement local search (single moves, repaired pairs, lifts). Returns the IL. ``ws_i``
    (:data:`WS_I_ROWS` rows) and ``ws_f`` (:data:`WS_F_ROWS` rows) are scratch rows of at least ``na +
    2`` and ``P`` entries, ``fw`` the flow workspace (:func:`flow_workspace`, large enough for this step),
    allocated by ``steps`` once per batch (grown when a step needs more), not per step: this function
    and every function it calls allocate nothing, so they are compiled without numba's reference
    counting (``jit_nonrt``).

    With whole-number costs (``whole``: integral ``mu`` and ``beta``, so every price is rounded and
    the true IL of a placement is a whole number) and ``WHOLE_GAINS`` in ``flags``, a lift or a level transfer is applied only when it lowers the true IL (by at least 1: a
    search gain above 0.5, since the ties' perturbations of all records together stay below 1/2,
    :func:`tie_costs`); the ties' secondary objective (evenly spread delays) is still pursued by the
    single moves, the emptyings and the flow polish, which cost little."""
    il = placement_il(na, P, o, pr, hh, oldest, mu)
    gmin = 0.5 if (whole and flags & 1024) else _EPS
    no = np.bool_(False)  # the ``keep`` arguments as variables, not literals (see _NOLIT)
    yes = np.bool_(True)
    gain = ws_f[0]
    ogain = ws_f[1]
    key = ws_f[2]
    cand = ws_i[0]
    dst = ws_i[1]
    order = ws_i[2]
    taken = ws_i[3]
    prev = ws_i[4]
    # records by value (the swaps' pairs, the lifts' exchanges)
    vstart = ws_i[5]
    vidx = ws_i[6]
    by_value(na, v, mv, vstart, vidx, ws_i[7])
    info = ws_i[10]
    tk = ws_i[8]
    for u in range(mv):
        tk[u] = 0
    # rng[:, c]: the records whose reach holds snapshot c, ``lo <= c <= hi``: a range, because the
    # records come sorted by home (``steps``), so lo and hi do not decrease
    rng = ws_i[11:13]
    srt = ws_i[13]
    tmp = ws_i[14]
    xk = ws_i[15]
    save = ws_i[16]
    best_o = ws_i[17]
    cnt = ws_i[18]
    G = ws_f[3]
    G2 = ws_f[4]
    lub = ws_f[5]  # LIFT_ORDER: per snapshot the bound of its lifts, and the snapshots in scan order
    lpo = ws_i[19]
    a = 0
    b = np.int64(0)
    for c in range(P):
        while a < na and hi[a] < c:
            a += 1
        while b < na and lo[b] <= c:
            b += 1
        rng[0, c] = a
        rng[1, c] = b
    tv = ws_i[9]
    # groups of interchangeable records (record_groups) and the lifts' candidate entries per group
    gid = ws_i[20]
    nxt = ws_i[21]
    cmult = ws_i[22]
    omult = ws_i[23]
    ehead = ws_i[24]
    enext = ws_i[25]
    etail = ws_i[26]
    record_groups(na, v, hh, pr, lo, hi, gid)
    rounds = 0
    while il > lb + _EPS and rounds < max_rounds:
        rounds += 1
        # 1. single moves
        best = -_EPS
        bi = np.int64(-1)
        bb = np.int64(-1)
        for i in range(na):
            a = o[i]
            ca = cost_of(i, a, P, pr, hh, oldest, mu)
            u = v[i]
            rem = a == P or removal_ok(n, N, M, cM, a, u, l)
            if not rem:
                continue
            for b in range(lo[i], hi[i] + 2):
                if b == hi[i] + 1:
                    b = P
                if b == a:
                    continue
                dlt = cost_of(i, b, P, pr, hh, oldest, mu) - ca
                if dlt < best and (b == P or add_ok(n, N, M, b, u, l)):
                    best = dlt
                    bi = i
                    bb = b
        stats[0] += 1
        if bi >= 0:
            stats[1] += 1
            move(n, N, M, cM, H, o, v, bi, bb, P, mv)
            il += best
            continue
        # 1b. swaps: two records of the same value exchange their places (counts unchanged: always
        # l-eligible)
        best = _EPS
        bi = np.int64(-1)
        bj = np.int64(-1)
        for u in range(mv if flags & 1 else 0):
            for a1 in range(vstart[u], vstart[u + 1]):
                i = vidx[a1]
                oi = o[i]
                ci = cost_of(i, oi, P, pr, hh, oldest, mu)
                for a2 in range(a1 + 1, vstart[u + 1]):
                    j = vidx[a2]
                    oj = o[j]
                    if oj == oi:
                        continue
                    if oj < P and (oj < lo[i] or oj > hi[i]):
                        continue
                    if oi < P and (oi < lo[j] or oi > hi[j]):
                        continue
                    g = ci + cost_of(j, oj, P, pr, hh, oldest, mu) - cost_of(i, oj, P, pr, hh, oldest, mu) - cost_of(j, oi, P, pr, hh, oldest, mu)
                    if g > best:
                        best = g
                        bi = i
                        bj = j
        if bi >= 0:
            stats[33] += 1
            oi = o[bi]
            o[bi] = o[bj]
            o[bj] = oi
            il -= best
            continue
        # 1c. empty a snapshot: each of its records to its best other option (a pending snapshot that
        # stays l-eligible, or suppression), the records in input order; the best such move that gains
        bt = _EPS
        bq = np.int64(-1)
        for q in range(P if flags & 2 else 0):
            if N[q] == 0:
                continue
            if flags & 4194304 and empty_bound(q, P, o, pr, hh, oldest, mu, lo, hi, rng) <= bt:
                stats[46] += 1  # EMPTY_BOUND: no emptying of q can beat the best one
                continue
            total = empty(n, N, M, cM, H, o, v, q, P, mv, l, taken, prev, dst, no, pr, hh, oldest, mu, lo, hi, na, rng)
            if total > bt:
                bt = total
                bq = q
        if bq >= 0:
            stats[34] += 1
            il -= empty(n, N, M, cM, H, o, v, bq, P, mv, l, taken, prev, dst, yes, pr, hh, oldest, mu, lo, hi, na, rng)
            continue
        stats[2] += 1
        # 2. lifts: raise the largest count of snapshot p to K and fill it with the best records; the
        # best lift over every pending snapshot p, level K and the two variants (strict; shed, or drain
        # without SHED) is applied
        bt = gmin  # (WHOLE_GAINS: a lift must lower the true IL)
        bp = np.int64(-1)
        bK = np.int64(-1)
        bs = np.int64(0)
        # the snapshots' bounds: the sum of their candidates' positive gains (pruning, heuristic: gains of
        # drains and sheds ignored). LIFT_ORDER: the snapshots by decreasing bound (ties in index order),
        # so that the best lifts are found first and the bound ends the scan; in either order, among
        # equal gains the first lift in (p, K, variant) order is kept (``lift_key``)
        lorder = flags & 16384 != 0
        for p in range(P):
            ub = 0.0
            for j in range(rng[0, p], rng[1, p]):
                if o[j] != p:
                    g = cost_of(j, o[j], P, pr, hh, oldest, mu) - cost_of(j, p, P, pr, hh, oldest, mu)
                    if g > 0.0:
                        ub += g
            lub[p] = ub
            a = p
            while lorder and a > 0 and lub[lpo[a - 1]] < ub:
                lpo[a] = lpo[a - 1]
                a -= 1
            lpo[a] = p
        bkey = np.int64(-1)
        ks = 3 * (na + lift_levels + 2)
        for z in range(P):
            p = lpo[z]
            if beaten(lub[p], bt, p * ks, bkey):
                if lorder:
                    break  # (the later snapshots' bounds are not higher)
                continue
            # candidates: records that can reach p and are elsewhere, by decreasing gain; among equal
            # gains, first those whose value is the most frequent in their source (it stays l-eligible)
            nc, nr = fill_candidates(p, na, P, o, v, lo, hi, n, pr, hh, oldest, mu, gain, key, cand, order, ogain, rng, srt, tmp,
                                     gid, nxt, cmult, omult, ehead, enext, etail, flags & 8388608 != 0)
            for K in range(M[p] + 1, M[p] + 1 + lift_levels):
                if N[p] + nr < l * K:
                    break
                # a level whose best filling selection (fill_bound) cannot beat the best lift is skipped
                if flags & 8 and beaten(fill_bound(n, N, p, K, l, v, order, ogain, omult, nc, tk, tv), bt, p * ks + 3 * K, bkey):
                    stats[35] += 1
                    continue
                for mode in (0, 2 if flags & 4 else 1):
                    total = lift(n, N, M, cM, H, o, v, order, ogain, omult, nxt, nc, p, K, P, mv, l, mode, taken, prev, dst, no, pr, hh, oldest, mu, lo, hi, na, vidx, vstart, info, cand, rng)
                    stats[3] += 1
                    if not beaten(total, bt, p * ks + 3 * K + mode, bkey):
                        bt = total
                        bp = p
                        bK = K
                        bs = mode
                        bkey = p * ks + 3 * K + mode
                    if mode == 0 and info[0] == 0:
                        break  # the strict variant broke no source: the other takes the same records
        if bp >= 0:
            stats[4] += 1
            stats[10 + min(P - 1 - bp, 9)] += 1
            stats[20 + min(bK - M[bp], 9)] += 1
            stats[30 + bs] += 1
            nc, nr = fill_candidates(bp, na, P, o, v, lo, hi, n, pr, hh, oldest, mu, gain, key, cand, order, ogain, rng, srt, tmp,
                                     gid, nxt, cmult, omult, ehead, enext, etail, flags & 8388608 != 0)
            il -= lift(n, N, M, cM, H, o, v, order, ogain, omult, nxt, nc, bp, bK, P, mv, l, bs, taken, prev, dst, yes, pr, hh, oldest, mu, lo, hi, na, vidx, vstart, info, cand, rng)
            continue
        # 3. repaired pairs (only when no single move and no lift improves): a gaining move that breaks a snapshot, and a repair entering or leaving it
        best = -_EPS
        bi = np.int64(-1)
        bb = np.int64(-1)
        bj = np.int64(-1)
        bd = np.int64(-1)
        work = 0
        for i in range(na if flags & 128 else 0):
            if work > pair_budget:
                break  # a bounded scan (the same in every run: results stay deterministic)
            a = o[i]
            ca = cost_of(i, a, P, pr, hh, oldest, mu)
            u = v[i]
            rem = a == P or removal_ok(n, N, M, cM, a, u, l)
            for b in range(lo[i], hi[i] + 2):
                if b == hi[i] + 1:
                    b = P
                if b == a:
                    continue
                d1 = cost_of(i, b, P, pr, hh, oldest, mu) - ca
                if d1 >= -_EPS:
                    continue
                addb = b == P or add_ok(n, N, M, b, u, l)
                if rem and addb:
                    continue  # a feasible single move (none improves here)
                # the repair must enter or leave a broken snapshot: X (the source a, removal broke it)
                # or Y (the destination b, the addition broke it)
                X = -1 if rem else a
                Y = -1 if addb else b
                work += na
                for j in range(na):
                    if j == i:
                        continue
                    c = o[j]
                    cj = cost_of(j, c, P, pr, hh, oldest, mu)
                    if c == X or c == Y:
                        # j leaves the broken snapshot: every other option
                        for d in range(lo[j], hi[j] + 2):
                            if d == hi[j] + 1:
                                d = P
                            if d == c:
                                continue
                            tot = d1 + cost_of(j, d, P, pr, hh, oldest, mu) - cj
                            if tot < best and pair_ok(n, N, M, cM, o, v, i, b, j, d, P, mv, l):
                                best = tot
                                bi = i
                                bb = b
                                bj = j
                                bd = d
                    else:
                        # j enters the broken snapshot(s) in its reach
                        for d in (X, Y):
                            if d < 0 or d >= P or d < lo[j] or d > hi[j]:
                                continue
                            tot = d1 + cost_of(j, d, P, pr, hh, oldest, mu) - cj
                            if tot < best and pair_ok(n, N, M, cM, o, v, i, b, j, d, P, mv, l):
                                best = tot
                                bi = i
                                bb = b
                                bj = j
                                bd = d
        if flags & 128:
            stats[5] += 1
        if bi >= 0:
            stats[6] += 1
            move(n, N, M, cM, H, o, v, bi, bb, P, mv)
            move(n, N, M, cM, H, o, v, bj, bd, P, mv)
            il += best
            continue
        # 4. when nothing else improves: the min-cost flow for the current levels (chains of moves of
        # any length that keep every level); the search ends with it (one flow workspace for 4 and 5)
        polish = flags & 16 != 0
        reuse = polish and flags & 32768 != 0  # (DUAL_REUSE)
        big = penalty(na, P, pr, mu, flags)
        transfers = flags & 32 != 0 and (na <= XFER_MAX_ACTIVE or w <= XFER_ANY_SIZE_MAX_W)
        if polish or transfers:
            if polish and flow_polish(na, P, mv, l, o, v, lo, hi, pr, hh, oldest, mu, n, N, M, cM, H, fw, xk, big, stats) > 0:
                stats[9] += 1
                il = placement_il(na, P, o, pr, hh, oldest, mu)
            # 5. then level transfers (two snapshots up to ``xfer_reach`` apart re-levelled at once, a
            # flow per candidate)
            if transfers:
                il = xfer_search(na, P, mv, l, o, v, lo, hi, pr, hh, oldest, mu, n, N, M, cM, H, stats, flags & 64 != 0, (flags >> 8) & 3, xfer_reach, fw, xk, save, best_o, cnt, G, G2, gmin, big, flags & 4096 != 0, xc, xb, xo, flags & 8192 != 0, reuse, flags & 131072 != 0, flags & 262144 != 0, lub, xt, flags & 524288 != 0, pk, pf, pg)
        break
    return il

@jit
def tie_costs(mu, w, na, tie):
    """The reposition costs the search sees (``TIE``, integer costs only): ``mu(d) + tie * eps *
    (mu(d) / mu(w))^2`` with ``eps = 1 / (2 (na + 1))``, so that the perturbations of ``na`` records
    together stay below 1/2, less than the smallest IL difference between two placements (1 with
    integer costs): a secondary objective that prefers evenly spread delays among placements of equal
    IL and never ranks a placement of higher IL first (``0 <= tie <= 1``)."""
    mud = np.empty_like(mu)
    tie_costs_into(mu, w, na, tie, mud)
    return mud


@jit
def tie_costs_into(mu, w, na, tie, mud):
    """:func:`tie_costs` written into ``mud`` (``steps``: one buffer for every step, no allocation)."""
    for d in range(len(mu)):
        mud[d] = mu[d]
    if tie != 0.0 and mu[w] > 0.0:
        eps = 0.5 / (na + 1)
        for d in range(w + 1):
            mud[d] = mu[d] + tie * eps * (mu[d] / mu[w]) ** 2


@jit
def surplus_cap(seen, l):
    """model.eligible_cap of ``seen``."""
    m = len(seen)
    mx = 0
    for s in range(m):
        if seen[s] > mx:
            mx = seen[s]
    # f(k) = sum_s min(seen_s, k) - l k is concave with f(0) = 0, so {k : f(k) >= 0} is an interval
    # [0, k*]: a binary search for k* in [0, mx], O(m log mx) per step instead of O(m mx) (the largest
    # count mx grows with the stream)
    lo = 0
    hi = mx
    while lo < hi:
        k = (lo + hi + 1) // 2
        tot = 0
        for s in range(m):
            tot += seen[s] if seen[s] < k else k
        if l * k <= tot:
            lo = k
        else:
            hi = k - 1
    return lo

@jit
def steps(codes, place, starts, base, t_from, t_to, l, w, mu, beta, defer, round_prices, seen, pub_max,
          final_oldest, out_method, out_cert, out_active, out_lb_gap, max_rounds, pair_budget, lift_levels, stats, flags, tie, xfer_reach):
    """Steps ``t_from .. t_to - 1`` on the records of snapshots ``base .. t_to - 1`` (snapshot ``k``
    is ``codes[starts[k - base]:starts[k - base + 1]]``, ``place`` absolute snapshot or -1).
    ``seen``: records per value of ``D[0..t_from - 1]`` (updated); ``pub_max``: per value the latest
    published home (updated as snapshots leave the window). ``final_oldest >= 0``: one final re-solve
    of ``D'[final_oldest..t_to - 1]`` (``flush()``, no shortcut, ``seen``/``pub_max`` untouched)."""
    m = len(beta)
    final = final_oldest >= 0
    nrec = len(codes)
    loc = np.full(m, -1, dtype=np.int64)
    gidx = np.empty(nrec, dtype=np.int64)
    hh = np.empty(nrec, dtype=np.int64)
    v = np.empty(nrec, dtype=np.int64)
    o = np.empty(nrec, dtype=np.int64)
    pr = np.empty(nrec)
    lo = np.empty(nrec, dtype=np.int64)
    hi = np.empty(nrec, dtype=np.int64)
    vals = np.empty(nrec, dtype=np.int64)
    n = np.zeros((w + 2, max(m, 1)), dtype=np.int64)
    N = np.zeros(w + 2, dtype=np.int64)
    M = np.zeros(w + 2, dtype=np.int64)
    cM = np.zeros(w + 2, dtype=np.int64)
    # scratch of the local search and of H, grown when a step needs more (not allocated per step)
    wcap = 0
    ws_i = np.zeros((WS_I_ROWS, 1), dtype=np.int64)
    ws_f = np.zeros((WS_F_ROWS, 1))
    fw = flow_workspace_sized(np.int64(1), np.int64(1))
    fw_e = np.int64(0)
    fw_v = np.int64(0)
    Hbuf = np.zeros((w + 3, 1), dtype=np.int64)
    # the level-transfer candidates of a round (at most P (2 reach) of them)
    # (at most P (2 reach + 1) of them, P pending snapshots: P <= min(w + 1, t_to), and at most P^2: the
    # bound (w + 1) (2 reach + 1) grew as w^2 / 2 with reach = w // 4, 6.4 GB at w = 20,000 on a stream
    # of two snapshots)
    pmax = min(w + 1, t_to)
    xn = pmax * min(2 * xfer_reach + 1, pmax) + 1
    xc = np.zeros(xn, dtype=np.int64)
    xb = np.zeros(xn)
    xo = np.zeros(xn, dtype=np.int64)
    xt = np.zeros(xn)
    mud = np.empty_like(mu)  # the search's costs (tie_costs_into, per step)
    pk = np.zeros((POOL, w + 2), dtype=np.int64)  # DUAL_POOL
    pf = np.zeros(POOL)
    pg = np.zeros((POOL, w + 2))
    for t in range(t_from, t_to):
        k = t - t_from
        oldest = final_oldest if final else max(0, t - w)
        if not final:
            for r in range(starts[t - base], starts[t - base + 1]):
                seen[codes[r]] += 1
        nvals = 0
        for s in range(m):
            if seen[s] > 0:
                nvals += 1
        out_lb_gap[k] = 0.0
        if nvals < l and not final:
            out_method[k] = METHOD_INITIAL
            out_cert[k] = CERT_FEWER
            out_active[k] = starts[t - base + 1] - starts[max(0, oldest - w) - base]
        else:
            shortcut = False
            if not final:
                # information loss 0: every active record at home (publisher._step's test)
                moved = False
                first = max(0, t - 2 * w)
                for h in range(first, t + 1):
                    for r in range(starts[h - base], starts[h - base + 1]):
                        pl = place[r]
                        if pl < 0 or (h < t and pl >= max(h + 1, oldest)):
                            moved = True
                            break
                    if moved:
                        break
                if not moved:
                    shortcut = True
                    out_method[k] = METHOD_INITIAL
                    out_cert[k] = CERT_IL0
                    out_active[k] = starts[t - base + 1] - starts[oldest - base]
            if not shortcut:
                P = t - oldest + 1
                # surplus values (model.surplus_values) for the deferred prices
                cap = surplus_cap(seen, l) if (defer > 0.0 and w > 0) else 0
                na = np.int64(0)  # np.int64, not 0: see _NOLIT
                mv = np.int64(0)
                for h in range(max(0, oldest - w), t + 1):
                    for r in range(starts[h - base], starts[h - base + 1]):
                        pl = place[r]
                        s = codes[r]
                        if h < oldest and not (pl >= oldest or (pl == -1 and pub_max[s] <= h)):
                            continue
                        gidx[na] = r
                        hh[na] = h
                        if loc[s] < 0:
                            loc[s] = mv
                            vals[mv] = s
                            mv += 1
                        v[na] = loc[s]
                        o[na] = P if pl < 0 else pl - oldest
                        b = beta[s]
                        if defer > 0.0 and w > 0 and h + w > t and not (seen[s] > cap):
                            rc = mu[min(max(t + 1 - h, 0), w)]
                            price = b - defer * max(b - rc, 0.0)
                            if round_prices:
                                price = np.round(price)
                            pr[na] = price
                        else:
                            pr[na] = b
                        lo[na] = max(h, oldest) - oldest
                        hi[na] = min(h + w, t) - oldest
                        na += 1
                for p in range(P):
                    N[p] = 0
                    for u in range(mv):
                        n[p, u] = 0
                for i in range(na):
                    if o[i] < P:
                        n[o[i], v[i]] += 1
                        N[o[i]] += 1
                # H[p, k]: values with k records in p (inc / dec keep M and cM in O(1))
                if na + 2 > wcap or P + 2 > wcap:
                    wcap = 2 * max(na + 2, P + 2)
                    ws_i = np.zeros((WS_I_ROWS, wcap), dtype=np.int64)
                    ws_f = np.zeros((WS_F_ROWS, wcap))
                    Hbuf = np.zeros((w + 3, wcap), dtype=np.int64)
                H = Hbuf
                for p in range(P + 1):
                    for x in range(na + 2):
                        H[p, x] = 0
                for p in range(P):
                    refresh(n, M, cM, p, mv)
                    for u in range(mv):
                        H[p, n[p, u]] += 1
                tie_costs_into(mu, w, na, tie if round_prices else 0.0, mud)
                lb = 0.0
                for i in range(na):
                    c0 = pr[i]
                    c1 = mud[oldest + lo[i] - hh[i]]
                    lb += c1 if c1 < c0 else c0
                # the flow workspace, grown when this step needs more (never allocated per step)
                need_e = na * (w + 3) + 2 * P * mv + 2 * P + 6
                need_v = P * mv + P + 2
                if need_e > fw_e or need_v > fw_v:
                    fw_e = max(need_e, 2 * fw_e)
                    fw_v = max(need_v, 2 * fw_v)
                    fw = flow_workspace_sized(fw_e, fw_v)
                il = local_search(na, P, mv, l, w, oldest, t, hh, v, o, pr, mud, n, N, M, cM, H, lo, hi, lb, max_rounds, pair_budget, lift_levels, stats, flags, ws_i, ws_f, xfer_reach, fw, np.bool_(round_prices), xc, xb, xo, xt, pk, pf, pg)
                stats[7] += 1
                # the certificate and the gap with the true costs (the search saw ``mud``)
                il = 0.0
                lb = 0.0
                for i in range(na):
                    il += cost_of(i, o[i], P, pr, hh, oldest, mu)
                    c1 = mu[oldest + lo[i] - hh[i]]
                    lb += c1 if c1 < pr[i] else pr[i]
                if il <= lb + _EPS:
                    stats[8] += 1
                out_method[k] = METHOD_FAST
                out_cert[k] = CERT_BOUND if il <= lb + _EPS else CERT_NONE
                out_active[k] = na
                out_lb_gap[k] = il - lb
                # Theorem 1: per value, earliest records to the earliest places; inside a (home, value)
                # group the earliest records are the placed ones
                # the records by value, in input order inside a value (``gidx`` rises with ``i``: the
                # same order as sorting by ``v * nrec + gidx``), without allocation
                srt = ws_i[2]
                by_value(na, v, mv, ws_i[0], srt, ws_i[3])
                a = 0
                pls = ws_i[1]
                while a < na:
                    u = v[srt[a]]
                    e = a
                    while e < na and v[srt[e]] == u:
                        e += 1
                    # placed places of value u, sorted; placed count per home
                    npl = 0
                    for q in range(a, e):
                        if o[srt[q]] < P:
                            pls[npl] = o[srt[q]]
                            npl += 1
                    for q in range(1, npl):  # insertion sort (a value's few places; no allocation)
                        x = pls[q]
                        z = q
                        while z > 0 and pls[z - 1] > x:
                            pls[z] = pls[z - 1]
                            z -= 1
                        pls[z] = x
                    q = a
                    idx = 0
                    while q < e:
                        h = hh[srt[q]]
                        r2 = q
                        kept = 0
                        while r2 < e and hh[srt[r2]] == h:
                            if o[srt[r2]] < P:
                                kept += 1
                            r2 += 1
                        for z in range(q, r2):
                            i = srt[z]
                            if z - q < kept:
                                place[gidx[i]] = oldest + pls[idx]
                                idx += 1
                            else:
                                place[gidx[i]] = -1
                        q = r2
                    a = e
                for u in range(mv):
                    loc[vals[u]] = -1
        # snapshot t - w leaves the window
        if not final and t - w >= 0:
            j = t - w
            for h in range(max(0, j - w), j + 1):
                for r in range(starts[h - base], starts[h - base + 1]):
                    if place[r] == j and pub_max[codes[r]] < h:
                        pub_max[codes[r]] = h
