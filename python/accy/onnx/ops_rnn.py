"""Recurrent ops: RNN, GRU, LSTM, unrolled over the static sequence length.

Per direction, the input projections of all time steps are one dot_general
(X [S, B, I] x W [G*H, I] -> [S, B, G*H]) with the additive biases folded in;
each step then adds H_{t-1} R^T and applies the gates. sequence_lens (known
or not) masks the steps t >= len[b]: the state is kept and Y is 0 there, so
Y_h is the state after each batch entry's last step in either direction.
"""

import numpy as np

from .context import FLOATS, INTS
from .registry import converter

#: activation name (lower case) -> (uses alpha, uses beta, default alpha, default beta)
ACTIVATIONS = {
    "relu": (False, False, None, None),
    "tanh": (False, False, None, None),
    "sigmoid": (False, False, None, None),
    "affine": (True, True, 1.0, 0.0),
    "leakyrelu": (True, False, 0.01, None),
    "thresholdedrelu": (True, False, 1.0, None),
    "scaledtanh": (True, True, 1.0, 1.0),
    "hardsigmoid": (True, True, 0.2, 0.5),
    "elu": (True, False, 1.0, None),
    "softsign": (False, False, None, None),
    "softplus": (False, False, None, None),
}

#: op type -> (gates, default activations per direction)
CELLS = {
    "RNN": (1, ["Tanh"]),
    "GRU": (3, ["Sigmoid", "Tanh"]),
    "LSTM": (4, ["Sigmoid", "Tanh", "Tanh"]),
}


def _activation(ctx, name, alpha, beta):
    """A function Tensor -> Tensor applying ONNX activation |name|."""
    def s(v, x):
        return ctx.scalar(v, x.dtype)

    if name == "relu":
        return lambda x: ctx.binary("maximum", x, s(0, x))
    if name == "tanh":
        return lambda x: ctx.unary("tanh", x)
    if name == "sigmoid":
        return lambda x: ctx.unary("logistic", x)
    if name == "affine":
        return lambda x: ctx.add(ctx.mul(x, s(alpha, x)), s(beta, x))
    if name == "leakyrelu":
        return lambda x: ctx.select(ctx.compare("GE", x, s(0, x)), x, ctx.mul(x, s(alpha, x)))
    if name == "thresholdedrelu":
        return lambda x: ctx.select(ctx.compare("GT", x, s(alpha, x)), x, s(0, x))
    if name == "scaledtanh":
        return lambda x: ctx.mul(s(alpha, x), ctx.unary("tanh", ctx.mul(x, s(beta, x))))
    if name == "hardsigmoid":
        return lambda x: ctx.op("clamp", [s(0, x), ctx.add(ctx.mul(x, s(alpha, x)), s(beta, x)),
                                          s(1, x)])
    if name == "elu":
        return lambda x: ctx.select(ctx.compare("GE", x, s(0, x)), x,
                                    ctx.mul(s(alpha, x), ctx.unary("expm1", x)))
    if name == "softsign":
        return lambda x: ctx.div(x, ctx.add(s(1, x), ctx.unary("abs", x)))
    assert name == "softplus"
    # log(1 + exp(x)), computed without overflow: max(x, 0) + log1p(exp(-|x|)).
    return lambda x: ctx.add(ctx.binary("maximum", x, s(0, x)),
                             ctx.unary("log1p", ctx.unary("exp", ctx.unary("negate",
                                                                           ctx.unary("abs", x)))))


def _activations(ctx, node, n_per_dir, defaults, n_dirs):
    """The activation functions of each direction: a list (per direction) of
    n_per_dir functions. Alphas and betas are taken in order by the
    activations that use them."""
    names = node.attr("activations")
    alphas = list(node.attr("activation_alpha", []) or [])
    betas = list(node.attr("activation_beta", []) or [])
    if names is None:
        names = defaults * n_dirs
    names = list(names)
    if len(names) == n_per_dir and n_dirs == 2:
        names = names * 2
    if len(names) != n_per_dir * n_dirs:
        raise node.error("activations needs %d names, got %d" % (n_per_dir * n_dirs, len(names)),
                         "activations")
    fns = []
    for name in names:
        key = name.lower()
        if key not in ACTIVATIONS:
            raise node.unsupported("activation %r" % name, "activations")
        use_a, use_b, da, db = ACTIVATIONS[key]
        a = alphas.pop(0) if use_a and alphas else da
        b = betas.pop(0) if use_b and betas else db
        fns.append(_activation(ctx, key, a, b))
    return [fns[d * n_per_dir:(d + 1) * n_per_dir] for d in range(n_dirs)]


def _dir_slice(ctx, t, d, rows=None):
    """t[d] of a per-direction tensor [dirs, ...], optionally rows
    [lo, hi) of its next axis."""
    start = [d] + [0] * (t.rank - 1)
    limit = [d + 1] + list(t.shape[1:])
    if rows is not None:
        start[1], limit[1] = rows
    s = ctx.slice(t, start, limit)
    return ctx.reshape(s, s.shape[1:])


def _cols(ctx, t, i, h):
    """Columns [i*h, (i+1)*h) of a [B, G*H] tensor."""
    return ctx.slice(t, [0, i * h], [t.shape[0], (i + 1) * h])


def _stack(ctx, xs, axis):
    """Concatenates |xs| along |axis|, in chunks within the operand limit."""
    limit = 1024
    while len(xs) > 1:
        xs = [ctx.concat(xs[i:i + limit], axis) for i in range(0, len(xs), limit)]
    return xs[0]


def _recurrent(ctx, node):
    kind = node.op_type
    n_gates, default_acts = CELLS[kind]
    x, w, r = node.input(0), node.input(1), node.input(2)
    b = node.input(3, required=False)
    seq_lens = node.input(4, required=False)
    init_h = node.input(5, required=False)
    init_c = node.input(6, required=False) if kind == "LSTM" else None
    peep = node.input(7, required=False) if kind == "LSTM" else None
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    direction = node.attr("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise node.error("direction %r" % direction, "direction")
    n_dirs = 2 if direction == "bidirectional" else 1
    layout = node.attr("layout", 0)
    if layout not in (0, 1):
        raise node.error("layout %r" % layout, "layout")
    clip = node.attr("clip")
    if clip is not None and not clip > 0:
        raise node.error("clip must be positive", "clip")
    if ctx.opset < 7:
        # RNN 1, GRU 1/3, LSTM 1: output_sequence only said whether Y is
        # produced, which the node's outputs say too.
        node.attr("output_sequence")
    lbr = node.attr("linear_before_reset", 0) if kind == "GRU" else 0
    input_forget = node.attr("input_forget", 0) if kind == "LSTM" else 0
    if x.rank != 3:
        raise node.error("X must have rank 3, got %s" % list(x.shape))
    if layout == 1:
        x = ctx.transpose(x, [1, 0, 2])
    seq, batch, n_in = x.shape
    hidden = node.attr("hidden_size")
    if hidden is None:
        hidden = r.shape[-1] if r.rank == 3 else 0
    gh = n_gates * hidden
    if w.shape != (n_dirs, gh, n_in) or r.shape != (n_dirs, gh, hidden):
        raise node.error("W %s or R %s does not match %d direction(s), hidden_size %d, "
                         "input size %d" % (list(w.shape), list(r.shape), n_dirs, hidden, n_in))
    if b is not None and b.shape != (n_dirs, 2 * gh):
        raise node.error("B must have shape [%d, %d], got %s" % (n_dirs, 2 * gh, list(b.shape)))
    if peep is not None and peep.shape != (n_dirs, 3 * hidden):
        raise node.error("P must have shape [%d, %d], got %s"
                         % (n_dirs, 3 * hidden, list(peep.shape)))
    for name, t in (("initial_h", init_h), ("initial_c", init_c)):
        if t is None:
            continue
        want = (n_dirs, batch, hidden) if layout == 0 else (batch, n_dirs, hidden)
        if t.shape != want:
            raise node.error("%s must have shape %s, got %s" % (name, list(want), list(t.shape)))
    if seq_lens is not None:
        if seq_lens.dtype not in INTS or seq_lens.shape != (batch,):
            raise node.error("sequence_lens must be an integer [%d], got %s%s"
                             % (batch, seq_lens.dtype, list(seq_lens.shape)))
    acts = _activations(ctx, node, len(default_acts), default_acts, n_dirs)
    dt = x.dtype

    def state0(t):
        if t is None:
            return [ctx.full((batch, hidden), 0, dt)] * n_dirs
        t = ctx.cast(t, dt)
        if layout == 1:
            t = ctx.transpose(t, [1, 0, 2])
        return [_dir_slice(ctx, t, d) for d in range(n_dirs)]

    h0s = state0(init_h)
    c0s = state0(init_c) if kind == "LSTM" else [None] * n_dirs

    # Step masks for sequence_lens: None where every batch entry runs.
    masks = [None] * seq
    if seq_lens is not None:
        if seq_lens.is_const:
            lens = np.asarray(seq_lens.const, dtype=np.int64)
            for t in range(seq):
                m = t < lens
                if not m.all():
                    masks[t] = ctx.broadcast_in_dim(ctx.constant(m), (batch, hidden), [0])
        else:
            lens = ctx.cast(seq_lens, "i64")
            for t in range(seq):
                m = ctx.compare("LT", ctx.scalar(t, "i64"), lens)
                masks[t] = ctx.broadcast_in_dim(m, (batch, hidden), [0])

    def clipped(v):
        if clip is None:
            return v
        return ctx.op("clamp", [ctx.scalar(-clip, dt), v, ctx.scalar(clip, dt)])

    want_y = len(node.outputs) > 0 and node.outputs[0] != ""
    ys, hs, cs = [], [], []
    for d in range(n_dirs):
        reverse = direction == "reverse" or d == 1
        wd = ctx.cast(_dir_slice(ctx, w, d), dt)
        rd = ctx.cast(_dir_slice(ctx, r, d), dt)
        xw = ctx.dot_general(x, wd, lhs_contract=[2], rhs_contract=[1])  # [S, B, G*H]
        rb_h = None
        if b is not None:
            wb = ctx.cast(_dir_slice(ctx, b, d, (0, gh)), dt)
            rb = ctx.cast(_dir_slice(ctx, b, d, (gh, 2 * gh)), dt)
            if kind == "GRU" and lbr:
                # The recurrent bias of h stays inside r * (H R_h^T + Rb_h).
                rb_h = ctx.slice(rb, [2 * hidden], [gh])
                rb = ctx.concat([ctx.slice(rb, [0], [2 * hidden]),
                                 ctx.full((hidden,), 0, dt)], 0)
            xw = ctx.add(xw, ctx.broadcast_in_dim(ctx.add(wb, rb), xw.shape, [2]))
        if peep is not None:
            pd = ctx.cast(_dir_slice(ctx, peep, d), dt)
            p_i, p_o, p_f = (ctx.slice(pd, [i * hidden], [(i + 1) * hidden]) for i in range(3))
        f = acts[d]
        h, c = h0s[d], c0s[d]
        y_steps = [None] * seq
        for t in (range(seq - 1, -1, -1) if reverse else range(seq)):
            xt = ctx.reshape(ctx.slice(xw, [t, 0, 0], [t + 1, batch, gh]), (batch, gh))
            if kind == "GRU":
                rzr = ctx.slice(rd, [0, 0], [2 * hidden, hidden])
                rh = ctx.slice(rd, [2 * hidden, 0], [gh, hidden])
                hr = ctx.dot_general(h, rzr, lhs_contract=[1], rhs_contract=[1])
                z = f[0](clipped(ctx.add(_cols(ctx, xt, 0, hidden), _cols(ctx, hr, 0, hidden))))
                rg = f[0](clipped(ctx.add(_cols(ctx, xt, 1, hidden), _cols(ctx, hr, 1, hidden))))
                if lbr:
                    hh = ctx.dot_general(h, rh, lhs_contract=[1], rhs_contract=[1])
                    if rb_h is not None:
                        hh = ctx.add(hh, rb_h)
                    hh = ctx.mul(rg, hh)
                else:
                    hh = ctx.dot_general(ctx.mul(rg, h), rh, lhs_contract=[1], rhs_contract=[1])
                cand = f[1](clipped(ctx.add(_cols(ctx, xt, 2, hidden), hh)))
                # (1 - z) * cand + z * h
                h_new = ctx.add(ctx.mul(ctx.sub(ctx.scalar(1, dt), z), cand), ctx.mul(z, h))
                c_new = None
            else:
                g = ctx.add(xt, ctx.dot_general(h, rd, lhs_contract=[1], rhs_contract=[1]))
                if kind == "RNN":
                    h_new = f[0](clipped(g))
                    c_new = None
                else:
                    gi, go, gf, gc = (_cols(ctx, g, i, hidden) for i in range(4))
                    if peep is not None:
                        gi = ctx.add(gi, ctx.mul(p_i, c))
                        gf = ctx.add(gf, ctx.mul(p_f, c))
                    it = f[0](clipped(gi))
                    if input_forget:
                        ft = ctx.sub(ctx.scalar(1, dt), it)
                    else:
                        ft = f[0](clipped(gf))
                    ct = f[1](clipped(gc))
                    c_new = ctx.add(ctx.mul(ft, c), ctx.mul(it, ct))
                    if peep is not None:
                        go = ctx.add(go, ctx.mul(p_o, c_new))
                    ot = f[0](clipped(go))
                    h_new = ctx.mul(ot, f[2](c_new))
            m = masks[t]
            if m is not None:
                y_steps[t] = ctx.select(m, h_new, ctx.scalar(0, dt)) if want_y else None
                h = ctx.select(m, h_new, h)
                if c_new is not None:
                    c = ctx.select(m, c_new, c)
            else:
                y_steps[t] = h_new
                h = h_new
                if c_new is not None:
                    c = c_new
        if want_y and seq:
            ys.append(_stack(ctx, [ctx.reshape(v, (1, 1, batch, hidden)) for v in y_steps], 0))
        elif want_y:
            ys.append(ctx.full((0, 1, batch, hidden), 0, dt))
        hs.append(ctx.reshape(h, (1, batch, hidden)))
        if c is not None:
            cs.append(ctx.reshape(c, (1, batch, hidden)))
    y = _stack(ctx, ys, 1) if want_y else None
    y_h = _stack(ctx, hs, 0)
    y_c = _stack(ctx, cs, 0) if cs else None
    if layout == 1:
        if y is not None:
            y = ctx.transpose(y, [2, 0, 1, 3])
        y_h = ctx.transpose(y_h, [1, 0, 2])
        if y_c is not None:
            y_c = ctx.transpose(y_c, [1, 0, 2])
    return [y, y_h] + ([y_c] if kind == "LSTM" else [])


@converter("RNN", "GRU", "LSTM")
def recurrent(ctx, node):
    return _recurrent(ctx, node)
