"""Indexing and scanning ops: GatherElements, GatherND, OneHot,
ReverseSequence, CumSum and Einsum.

accy has one gather (ONNX Gather along an axis). Element-wise gathers lower
to it on the flattened data: the linear index of every element is computed
with accy integer ops (iota, multiply, add) from the index tensor, after
negative indices are wrapped (i + d) and the result is clamped into [0, d-1]
(so an out-of-range index reads the nearest element of its own row, never
another row; ONNX leaves out-of-range indices undefined)."""

import numpy as np

from .context import FLOATS, INTS, Tensor, broadcast_shapes, normalize_axis
from .registry import converter


def _int_value(node, a, what):
    a = np.asarray(a)
    if a.size != 1:
        raise node.error("%s must hold one value, got shape %s" % (what, list(a.shape)))
    if a.dtype.kind not in "iu":
        raise node.error("%s must be an integer, got %s" % (what, a.dtype))
    return int(a.reshape(-1)[0])


def _wrap_clamp(ctx, idx, d):
    """i64 indices: i + d where i < 0, then clamped into [0, d - 1]."""
    idx = ctx.cast(idx, "i64")
    neg = ctx.compare("LT", idx, ctx.scalar(0, "i64"))
    idx = ctx.select(neg, ctx.add(idx, ctx.scalar(d, "i64")), idx)
    return ctx.op("clamp", [ctx.scalar(0, "i64"), idx, ctx.scalar(max(d - 1, 0), "i64")])


def _axis_term(ctx, shape, axis, stride):
    """iota along |axis| of |shape| times |stride| (i64), or None if 0."""
    if stride == 0 or shape[axis] <= 1:
        return None
    t = ctx.iota(shape, axis, "i64")
    return t if stride == 1 else ctx.mul(t, ctx.scalar(stride, "i64"))


def _sum(ctx, terms, shape):
    terms = [t for t in terms if t is not None]
    if not terms:
        return ctx.full(shape, 0, "i64")
    acc = terms[0]
    for t in terms[1:]:
        acc = ctx.add(acc, t)
    return ctx.broadcast_to(acc, shape)


def _strides(shape):
    s, out = 1, []
    for d in reversed(shape):
        out.append(s)
        s *= d
    return out[::-1]


def gather_elements(ctx, node, data, idx, axis):
    """out[i] = data[i with i[axis] = idx[i]] (ONNX GatherElements)."""
    if data.rank == 0:
        raise node.error("data must have rank >= 1")
    if idx.rank != data.rank:
        raise node.error("indices rank %d differs from data rank %d" % (idx.rank, data.rank))
    for a in range(data.rank):
        if a != axis and idx.shape[a] > data.shape[a]:
            raise node.error("indices dim %d (%d) exceeds the data's (%d)"
                             % (a, idx.shape[a], data.shape[a]))
    if idx.size and data.shape[axis] == 0:
        raise node.error("cannot gather from an empty axis %d" % axis)
    strides = _strides(data.shape)
    terms = [_axis_term(ctx, idx.shape, a, strides[a]) for a in range(data.rank) if a != axis]
    pos = _wrap_clamp(ctx, idx, data.shape[axis])
    if strides[axis] != 1:
        pos = ctx.mul(pos, ctx.scalar(strides[axis], "i64"))
    lin = _sum(ctx, terms + [pos], idx.shape)
    flat = ctx.reshape(data, (data.size,))
    return ctx.gather(flat, lin, 0)


def _require_ints(node, t, what="indices"):
    if t.dtype not in INTS:
        raise node.error("%s must be integers, got %s" % (what, t.dtype))


@converter("GatherElements", min_opset=11)
def gather_elements_op(ctx, node):
    data, idx = node.input(0), node.input(1)
    _require_ints(node, idx)
    if data.rank == 0:
        raise node.error("data must have rank >= 1")
    axis = normalize_axis(node.attr("axis", 0), data.rank, node)
    return gather_elements(ctx, node, data, idx, axis)


@converter("GatherND", min_opset=11)
def gather_nd(ctx, node):
    data, idx = node.input(0), node.input(1)
    _require_ints(node, idx)
    b = node.attr("batch_dims", 0)
    r, q = data.rank, idx.rank
    if r < 1 or q < 1:
        raise node.error("data and indices need rank >= 1")
    if not 0 <= b < min(q, r):
        raise node.error("batch_dims %d must be in [0, %d)" % (b, min(q, r)), "batch_dims")
    m = idx.shape[-1]
    if not 1 <= m <= r - b:
        raise node.error("indices' last dim %d must be in [1, %d]" % (m, r - b))
    if idx.shape[:b] != data.shape[:b]:
        raise node.error("batch dims differ: %s vs %s"
                         % (list(idx.shape[:b]), list(data.shape[:b])))
    qshape = idx.shape[:-1]
    ishape = data.shape[b:b + m]
    rest = data.shape[b + m:]
    n_batch = int(np.prod(data.shape[:b], dtype=np.int64))
    n_index = int(np.prod(ishape, dtype=np.int64))
    n_rest = int(np.prod(rest, dtype=np.int64))
    if n_index == 0 and int(np.prod(qshape, dtype=np.int64)) > 0:
        raise node.error("cannot gather from an empty indexed axis")
    # Linear row of data reshaped to [batch * index, rest].
    istrides = _strides(ishape)
    bstrides = _strides(data.shape[:b])
    terms = [_axis_term(ctx, qshape, t, bstrides[t] * n_index) for t in range(b)]
    for j in range(m):
        start = [0] * q
        limit = list(idx.shape)
        start[-1], limit[-1] = j, j + 1
        comp = ctx.reshape(ctx.slice(idx, start, limit), qshape)
        comp = _wrap_clamp(ctx, comp, ishape[j])
        if istrides[j] != 1:
            comp = ctx.mul(comp, ctx.scalar(istrides[j], "i64"))
        terms.append(comp)
    lin = _sum(ctx, terms, qshape)
    flat = ctx.reshape(data, (n_batch * n_index, n_rest))
    out = ctx.gather(flat, lin, 0)
    return ctx.reshape(out, qshape + rest)


@converter("OneHot", min_opset=9)
def one_hot(ctx, node):
    idx, values = node.input(0), node.input(2)
    depth = np.asarray(node.const_input(1, required=True))
    if depth.size != 1:
        raise node.error("depth must hold one value")
    depth = depth.reshape(-1)[0]
    if depth.dtype.kind == "f" and not np.isfinite(depth):
        raise node.error("depth %r is not finite" % depth)
    depth = int(depth)  # a float depth is cast to an integer, as ONNX says
    if depth < 0:
        raise node.error("depth %d is negative" % depth)
    if values.size != 2 or values.rank != 1:
        raise node.error("values must be [off_value, on_value], got shape %s"
                         % list(values.shape))
    if idx.dtype not in INTS + FLOATS:
        raise node.error("indices must be numeric, got %s" % idx.dtype)
    axis = normalize_axis(node.attr("axis", -1), idx.rank + 1, node)
    out_shape = idx.shape[:axis] + (depth,) + idx.shape[axis:]
    # Non-integer indices are cast to int64 (truncating), then (from opset
    # 11) a negative index counts from the end; anything outside
    # [-depth, depth-1] ([0, depth-1] before opset 11) matches no position
    # and gives off_value everywhere.
    i = ctx.cast(idx, "i64")
    if ctx.opset >= 11:
        neg = ctx.compare("LT", i, ctx.scalar(0, "i64"))
        i = ctx.select(neg, ctx.add(i, ctx.scalar(depth, "i64")), i)
    dims = [a for a in range(len(out_shape)) if a != axis]
    i = ctx.broadcast_in_dim(i, out_shape, dims)
    hit = ctx.compare("EQ", i, ctx.iota(out_shape, axis, "i64"))
    off = ctx.reshape(ctx.slice(values, [0], [1]), ())
    on = ctx.reshape(ctx.slice(values, [1], [2]), ())
    return ctx.select(hit, on, off)


@converter("ReverseSequence", min_opset=10)
def reverse_sequence(ctx, node):
    x, lens = node.input(0), node.input(1)
    _require_ints(node, lens, "sequence_lens")
    if x.rank < 2:
        raise node.error("input must have rank >= 2")
    t_axis = node.attr("time_axis", 0)
    b_axis = node.attr("batch_axis", 1)
    if t_axis not in (0, 1) or b_axis not in (0, 1) or t_axis == b_axis:
        raise node.error("time_axis and batch_axis must be 0 and 1 in some order")
    t_len, n_batch = x.shape[t_axis], x.shape[b_axis]
    if lens.shape != (n_batch,):
        raise node.error("sequence_lens has shape %s, expected [%d]"
                         % (list(lens.shape), n_batch))
    # Source time index: t < len ? len - 1 - t : t, per (time, batch).
    tb = [0, 0]
    tb[t_axis], tb[b_axis] = t_len, n_batch
    length = ctx.broadcast_in_dim(ctx.cast(lens, "i64"), tb, [b_axis])
    t = ctx.iota(tb, t_axis, "i64")
    src = ctx.select(ctx.compare("LT", t, length),
                     ctx.sub(ctx.sub(length, ctx.scalar(1, "i64")), t), t)
    src = ctx.broadcast_in_dim(src, x.shape, [0, 1])
    return gather_elements(ctx, node, x, src, t_axis)


@converter("CumSum", min_opset=11)
def cumsum(ctx, node):
    x = node.input(0)
    if x.dtype not in FLOATS + INTS:
        raise node.error("input dtype %s is not numeric" % x.dtype)
    axis = _int_value(node, node.const_input(1, required=True), "axis")
    exclusive = node.attr("exclusive", 0)
    reverse = node.attr("reverse", 0)
    if x.rank == 0:
        raise node.error("input must have rank >= 1")
    axis = normalize_axis(axis, x.rank, node)
    n = x.shape[axis]
    if n == 0:
        return x
    y = ctx.op("reverse", [x], [axis]) if reverse else x
    r = x.rank
    if exclusive:  # shift by one: y[0] = 0, y[i] = x[i-1]
        low, high = [0] * r, [0] * r
        low[axis], high[axis] = 1, -1
        y = ctx.pad(y, low, high)
    # A window of the whole axis with n - 1 leading padding elements: output
    # i sums y[0..i], in index order.
    window, pad_low = [1] * r, [0] * r
    window[axis], pad_low[axis] = n, n - 1
    attrs = [0] + window + [1] * r + pad_low + [0] * r + [1] * r + [1] * r
    y = ctx.op("reduce_window", [y], attrs)
    return ctx.op("reverse", [y], [axis]) if reverse else y


# ---- Einsum ----------------------------------------------------------------------

def _parse_term(node, term, rank, n_ell):
    """Labels of one operand: letters, and ("...", k) for ellipsis dims."""
    if term.count("...") > 1:
        raise node.error("more than one ellipsis in term %r" % term, "equation")
    if "..." in term:
        head, tail = term.split("...")
        k = rank - len(head) - len(tail)
        if k < 0:
            raise node.error("term %r has more labels than rank %d" % (term, rank), "equation")
        labels = list(head) + [("...", n_ell - k + p) for p in range(k)] + list(tail)
    else:
        labels = list(term)
        if len(labels) != rank:
            raise node.error("term %r has %d labels for rank %d" % (term, len(labels), rank),
                             "equation")
    for lab in labels:
        if isinstance(lab, str) and not lab.isalpha():
            raise node.error("bad label %r in %r" % (lab, term), "equation")
    return labels


def _diagonal(ctx, node, x, labels):
    """Takes the diagonal of every label repeated within one operand."""
    while True:
        seen = {}
        for i, lab in enumerate(labels):
            seen.setdefault(lab, []).append(i)
        rep = [(lab, ps) for lab, ps in seen.items() if len(ps) > 1]
        if not rep:
            return x, labels
        lab, ps = rep[0]
        n = x.shape[ps[0]]
        if any(x.shape[p] != n for p in ps):
            raise node.error("label %r has different sizes within one operand" % (lab,))
        others = [i for i in range(x.rank) if i not in ps]
        x = ctx.transpose(x, others + ps)
        k = len(ps)
        x = ctx.reshape(x, [x.shape[i] for i in range(len(others))] + [n ** k])
        step = sum(n ** j for j in range(k))
        idx = Tensor.constant((np.arange(n, dtype=np.int64) * step))
        x = ctx.gather(x, idx, len(others))
        labels = [labels[i] for i in others] + [lab]


def _sum_labels(ctx, x, labels, drop):
    axes = [i for i, lab in enumerate(labels) if lab in drop]
    if not axes:
        return x, labels
    return ctx.reduce("sum", x, axes), [lab for lab in labels if lab not in drop]


def _broadcast_label(ctx, x, labels, lab, size):
    i = labels.index(lab)
    if x.shape[i] == size:
        return x
    shape = list(x.shape)
    shape[i] = size
    return ctx.broadcast_in_dim(x, shape, range(x.rank))


@converter("Einsum", min_opset=12)
def einsum(ctx, node):
    eq = node.attr("equation")
    if eq is None:
        raise node.error("attribute 'equation' is required", "equation")
    eq = eq.replace(" ", "")
    xs = [node.input(i) for i in range(len(node.inputs))]
    if not xs:
        raise node.error("needs at least one input")
    for x in xs:
        if x.dtype not in FLOATS + INTS:
            raise node.unsupported("dtype %s is not supported" % x.dtype)
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(xs):
        raise node.error("equation has %d terms for %d inputs" % (len(terms), len(xs)),
                         "equation")
    n_ell = 0
    for t, x in zip(terms, xs):
        if "..." in t:
            n_ell = max(n_ell, x.rank - (len(t) - 3))
    ops = [_parse_term(node, t, x.rank, n_ell) for t, x in zip(terms, xs)]
    ell = [("...", p) for p in range(n_ell)]
    if arrow:
        if rhs.count("...") > 1:
            raise node.error("more than one ellipsis in the output", "equation")
        head, _, tail = rhs.partition("...")
        out = list(head) + (ell if "..." in rhs else []) + list(tail)
        for lab in out:
            if isinstance(lab, str) and (not lab.isalpha() or
                                         not any(lab in o for o in ops)):
                raise node.error("output label %r is not an input label" % lab, "equation")
        if len(set(out)) != len(out):
            raise node.error("repeated output label", "equation")
    else:
        counts = {}
        for o in ops:
            for lab in o:
                if isinstance(lab, str):
                    counts[lab] = counts.get(lab, 0) + 1
        out = ell + sorted(lab for lab, c in counts.items() if c == 1)
    # Label sizes (1 broadcasts).
    size = {}
    for o, x in zip(ops, xs):
        for lab, d in zip(o, x.shape):
            if size.get(lab, 1) != 1 and d != 1 and d != size[lab]:
                raise node.error("label %r has sizes %d and %d" % (lab, size[lab], d))
            if d != 1 or lab not in size:
                size[lab] = d
    vals = []
    for o, x in zip(ops, xs):
        x, o = _diagonal(ctx, node, x, o)
        vals.append((x, o))
    x, labels = vals[0]
    for j in range(1, len(vals) + 1):
        later = set(out)
        for _, o in vals[j:]:
            later.update(o)
        if j == len(vals):
            x, labels = _sum_labels(ctx, x, labels, set(labels) - later)
            break
        y, ylabels = vals[j]
        later_y = set(out)
        for _, o in vals[j + 1:]:
            later_y.update(o)
        x, labels = _sum_labels(ctx, x, labels, set(labels) - later_y - set(ylabels))
        y, ylabels = _sum_labels(ctx, y, ylabels, set(ylabels) - later_y - set(labels))
        common = [lab for lab in labels if lab in ylabels]
        for lab in common:
            x = _broadcast_label(ctx, x, labels, lab, size[lab])
            y = _broadcast_label(ctx, y, ylabels, lab, size[lab])
        batch = [lab for lab in common if lab in later_y]
        contract = [lab for lab in common if lab not in later_y]
        if x.dtype != y.dtype:
            raise node.error("operand dtypes differ: %s and %s" % (x.dtype, y.dtype))
        x = ctx.dot_general(x, y, [labels.index(lab) for lab in batch],
                            [ylabels.index(lab) for lab in batch],
                            [labels.index(lab) for lab in contract],
                            [ylabels.index(lab) for lab in contract])
        labels = batch + [lab for lab in labels if lab not in common] + \
            [lab for lab in ylabels if lab not in common]
    # Labels of the output that stayed 1 where another operand broadcast
    # them cannot remain: every such label met its partner in a contraction.
    x = ctx.transpose(x, [labels.index(lab) for lab in out])
    shape = [size[lab] for lab in out]
    if list(x.shape) != shape:
        x = ctx.broadcast_to(x, broadcast_shapes(x.shape, tuple(shape)))
    return x


# ---- GridSample ----------------------------------------------------------------------

class _Grid:
    """Runtime sampling of X [N, C, H, W] at float coordinates [N, Ho, Wo]
    (PyTorch's grid_sample, which ONNX GridSample follows)."""

    def __init__(self, ctx, x, ct, padding, align):
        self.ctx, self.ct, self.padding, self.align = ctx, ct, padding, align
        n, c, self.h, self.w = x.shape
        # rows of [N * H * W, C]: one gather per tap fetches all channels
        self.table = ctx.reshape(ctx.transpose(ctx.cast(x, ct), [0, 2, 3, 1]),
                                 (n * self.h * self.w, c))

    def s(self, v):
        return self.ctx.scalar(v, self.ct)

    def unnormalize(self, g, size):
        ctx = self.ctx
        if self.align:  # ((g + 1) / 2) * (size - 1)
            return ctx.mul(ctx.div(ctx.add(g, self.s(1)), self.s(2)), self.s(size - 1))
        return ctx.div(ctx.sub(ctx.mul(ctx.add(g, self.s(1)), self.s(size)), self.s(1)),
                       self.s(2))

    def _reflect(self, v, twice_low, twice_high):
        ctx = self.ctx
        if twice_low == twice_high:
            return ctx.full(v.shape, 0, self.ct)
        lo, span = twice_low / 2, (twice_high - twice_low) / 2
        a = ctx.unary("abs", ctx.sub(v, self.s(lo)))
        extra = ctx.binary("remainder", a, self.s(span))
        flips = ctx.unary("floor", ctx.div(a, self.s(span)))
        even = ctx.compare("EQ", ctx.binary("remainder", flips, self.s(2)), self.s(0))
        return ctx.select(even, ctx.add(extra, self.s(lo)),
                          ctx.add(ctx.sub(self.s(span), extra), self.s(lo)))

    def coordinates(self, v, size):
        """The padding mode applied to source coordinates."""
        ctx = self.ctx
        if self.padding == "zeros":
            return v
        if self.padding == "reflection":
            v = self._reflect(v, 0, 2 * (size - 1)) if self.align else \
                self._reflect(v, -1, 2 * size - 1)
        return ctx.op("clamp", [self.s(0), v, self.s(size - 1)])

    def tap(self, xi, yi):
        """Values at integer-valued coordinates: [N, Ho, Wo, C]; 0 outside."""
        ctx = self.ctx
        inside = ctx.binary("and", ctx.binary("and", ctx.compare("GE", xi, self.s(0)),
                                              ctx.compare("LE", xi, self.s(self.w - 1))),
                            ctx.binary("and", ctx.compare("GE", yi, self.s(0)),
                                       ctx.compare("LE", yi, self.s(self.h - 1))))
        xc = ctx.cast(ctx.op("clamp", [self.s(0), xi, self.s(max(self.w - 1, 0))]), "i64")
        yc = ctx.cast(ctx.op("clamp", [self.s(0), yi, self.s(max(self.h - 1, 0))]), "i64")
        base = ctx.mul(ctx.iota(xi.shape, 0, "i64"), ctx.scalar(self.h * self.w, "i64"))
        lin = ctx.add(ctx.add(base, ctx.mul(yc, ctx.scalar(self.w, "i64"))), xc)
        v = ctx.gather(self.table, lin, 0)
        inside = ctx.broadcast_in_dim(inside, v.shape, [0, 1, 2])
        return ctx.select(inside, v, self.s(0))

    def weighted(self, v, w):
        return self.ctx.mul(v, self.ctx.broadcast_in_dim(w, v.shape, [0, 1, 2]))


def _cubic_weights(ctx, t, s, a=-0.75):
    """PyTorch's cubic convolution coefficients for fraction t (a tensor)."""
    def cc1(v):  # ((a + 2) v - (a + 3)) v v + 1
        return ctx.add(ctx.mul(ctx.mul(ctx.sub(ctx.mul(s(a + 2), v), s(a + 3)), v), v), s(1))

    def cc2(v):  # ((a v - 5 a) v + 8 a) v - 4 a
        return ctx.sub(ctx.mul(ctx.add(ctx.mul(ctx.sub(ctx.mul(s(a), v), s(5 * a)), v),
                                       s(8 * a)), v), s(4 * a))
    one_minus = ctx.sub(s(1), t)
    return [cc2(ctx.add(t, s(1))), cc1(t), cc1(one_minus), cc2(ctx.add(one_minus, s(1)))]


@converter("GridSample", min_opset=16)
def grid_sample(ctx, node):
    x, grid = node.input(0), node.input(1)
    mode = node.attr("mode", "bilinear" if ctx.opset < 20 else "linear")
    padding = node.attr("padding_mode", "zeros")
    align = node.attr("align_corners", 0)
    if ctx.opset >= 20:
        # GridSample 20 renames the modes (and allows N-D, of which the 2-D
        # case is converted)
        if mode in ("bilinear", "bicubic"):
            raise node.error("mode %r is named %r from opset 20"
                             % (mode, mode[2:] if mode == "bicubic" else "linear"), "mode")
        mode = {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode)
        if x.rank != 4:
            raise node.unsupported("%d-D sampling (only 2-D, X of rank 4, is converted)"
                                   % (x.rank - 2))
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise node.unsupported("mode %r" % mode, "mode")
    if padding not in ("zeros", "border", "reflection"):
        raise node.unsupported("padding_mode %r" % padding, "padding_mode")
    if x.dtype not in FLOATS or grid.dtype not in FLOATS:
        raise node.unsupported("dtypes %s, %s (floats only)" % (x.dtype, grid.dtype))
    if x.rank != 4 or grid.rank != 4 or grid.shape[3] != 2 or grid.shape[0] != x.shape[0]:
        raise node.error("X must be [N, C, H, W] and grid [N, Ho, Wo, 2], got %s and %s"
                         % (list(x.shape), list(grid.shape)))
    n, c, h, w = x.shape
    _, ho, wo, _ = grid.shape
    if (h == 0 or w == 0) and n * ho * wo * c:
        raise node.error("cannot sample an empty image")
    ct = "f64" if x.dtype == "f64" else "f32"
    gs = _Grid(ctx, x, ct, padding, bool(align))
    g = ctx.cast(grid, ct)
    gx = ctx.reshape(ctx.slice(g, [0, 0, 0, 0], [n, ho, wo, 1]), (n, ho, wo))
    gy = ctx.reshape(ctx.slice(g, [0, 0, 0, 1], [n, ho, wo, 2]), (n, ho, wo))
    ix, iy = gs.unnormalize(gx, w), gs.unnormalize(gy, h)
    if mode == "nearest":
        ix = ctx.unary("round_nearest_even", gs.coordinates(ix, w))
        iy = ctx.unary("round_nearest_even", gs.coordinates(iy, h))
        out = gs.tap(ix, iy)
    elif mode == "bilinear":
        ix, iy = gs.coordinates(ix, w), gs.coordinates(iy, h)
        x0, y0 = ctx.unary("floor", ix), ctx.unary("floor", iy)
        x1, y1 = ctx.add(x0, gs.s(1)), ctx.add(y0, gs.s(1))
        wx0, wx1 = ctx.sub(x1, ix), ctx.sub(ix, x0)
        wy0, wy1 = ctx.sub(y1, iy), ctx.sub(iy, y0)
        out = None
        for xi, yi, wgt in ((x0, y0, ctx.mul(wx0, wy0)), (x1, y0, ctx.mul(wx1, wy0)),
                            (x0, y1, ctx.mul(wx0, wy1)), (x1, y1, ctx.mul(wx1, wy1))):
            t = gs.weighted(gs.tap(xi, yi), wgt)
            out = t if out is None else ctx.add(out, t)
    else:  # bicubic: padding applies to each of the 4 x 4 taps
        x0, y0 = ctx.unary("floor", ix), ctx.unary("floor", iy)
        cx = _cubic_weights(ctx, ctx.sub(ix, x0), gs.s)
        cy = _cubic_weights(ctx, ctx.sub(iy, y0), gs.s)
        out = None
        for j in range(4):
            yj = gs.coordinates(ctx.add(y0, gs.s(j - 1)), h)
            row = None
            for i in range(4):
                xi = gs.coordinates(ctx.add(x0, gs.s(i - 1)), w)
                t = gs.weighted(gs.tap(xi, yj), cx[i])
                row = t if row is None else ctx.add(row, t)
            t = gs.weighted(row, cy[j])
            out = t if out is None else ctx.add(out, t)
    return ctx.cast(ctx.transpose(out, [0, 3, 1, 2]), x.dtype)


# ---- opset 20 AffineGrid, opset 18 Col2Im ------------------------------------------------

@converter("AffineGrid", min_opset=20)
def affine_grid(ctx, node):
    """grid[n, ..., :] = theta[n] @ (x, y[, z], 1) over the normalised
    coordinates of an image of |size| (2-D: [N, H, W, 2]; 3-D:
    [N, D, H, W, 3]); x runs along the last axis."""
    theta = node.input(0)
    size = [int(v) for v in np.asarray(node.const_input(1, required=True)).reshape(-1)]
    align = node.attr("align_corners", 0)
    if theta.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % theta.dtype)
    nd = len(size) - 2
    if nd not in (2, 3) or theta.shape != (size[0], nd, nd + 1):
        raise node.error("theta %s and size %s: expected [N, %d, %d] for a %d-D size"
                         % (list(theta.shape), size, nd, nd + 1, len(size)))
    spatial = size[2:]

    def axis(n):
        if align:
            return np.linspace(-1, 1, n) if n > 1 else np.zeros(n)
        return (np.arange(n) * 2 + 1) / n - 1

    grids = np.meshgrid(*[axis(n) for n in spatial], indexing="ij")  # D, H, W order
    coords = [grids[i].reshape(-1) for i in reversed(range(nd))]  # x first
    base = np.stack(coords + [np.ones(coords[0].shape)], axis=1)  # [P, nd + 1]
    dt = "f32" if theta.dtype in ("f16", "bf16") else theta.dtype
    b = ctx.constant(base.astype(np.float32 if dt == "f32" else np.float64), dt)
    t = ctx.cast(theta, dt)
    r = ctx.dot_general(t, b, lhs_contract=[2], rhs_contract=[1])  # [N, nd, P]
    r = ctx.transpose(r, [0, 2, 1])
    return ctx.cast(ctx.reshape(r, [size[0]] + spatial + [nd]), theta.dtype)


@converter("Col2Im", min_opset=18)
def col2im(ctx, node):
    """Sums the columns [N, C * prod(block), L] back into an image
    [N, C, image...]: each kernel position's [N, C, out...] slab is spread
    by a strided pad (interior stride - 1) to its place in the padded
    image, the slabs are added in kernel order, and the pads cut off."""
    x = node.input(0)
    image = [int(v) for v in np.asarray(node.const_input(1, required=True)).reshape(-1)]
    block = [int(v) for v in np.asarray(node.const_input(2, required=True)).reshape(-1)]
    nd = len(image)
    if nd < 1 or len(block) != nd:
        raise node.error("image_shape %s and block_shape %s" % (image, block))
    dil = list(node.attr("dilations", [1] * nd))
    strides = list(node.attr("strides", [1] * nd))
    pads = list(node.attr("pads", [0] * (2 * nd)))
    if len(dil) != nd or len(strides) != nd or len(pads) != 2 * nd or \
            min(dil + strides) < 1 or min(block) < 1 or min(pads) < 0:
        raise node.error("dilations, strides (>= 1) and pads (>= 0) need %d, %d and %d "
                         "entries" % (nd, nd, 2 * nd))
    if x.rank != 3:
        raise node.error("input must be [N, C * prod(block), L], got %s" % list(x.shape))
    kprod = int(np.prod(block))
    n, ck, l = x.shape
    if ck % kprod:
        raise node.error("dimension 1 (%d) is not a multiple of prod(block) %d" % (ck, kprod))
    c = ck // kprod
    padded = [image[i] + pads[i] + pads[nd + i] for i in range(nd)]
    out = [(padded[i] - (dil[i] * (block[i] - 1) + 1)) // strides[i] + 1 for i in range(nd)]
    if min(out) < 1 or int(np.prod(out)) != l:
        raise node.error("L = %d does not match the %s blocks of image %s" % (l, out, image))
    v = ctx.reshape(x, [n, c] + block + out)
    acc = None
    for k in np.ndindex(*block):
        start = [0, 0] + list(k) + [0] * nd
        limit = [n, c] + [ki + 1 for ki in k] + out
        slab = ctx.reshape(ctx.slice(v, start, limit), [n, c] + out)
        low = [0, 0] + [k[i] * dil[i] for i in range(nd)]
        used = [out[i] + (out[i] - 1) * (strides[i] - 1) for i in range(nd)]
        high = [0, 0] + [padded[i] - low[2 + i] - used[i] for i in range(nd)]
        placed = ctx.pad(slab, low, high, [0, 0] + [s - 1 for s in strides])
        acc = placed if acc is None else ctx.add(acc, placed)
    return ctx.slice(acc, [0, 0] + pads[:nd],
                     [n, c] + [pads[i] + image[i] for i in range(nd)])
