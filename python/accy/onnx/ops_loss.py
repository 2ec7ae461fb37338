"""Loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.

The target class is selected with a one-hot mask (iota over the class axis
compared with the broadcast target) and a sum over that axis, so no
gather-elements op is needed and the sum adds exact zeros only. A target
equal to ignore_index contributes a loss of 0 and a weight of 0.
"""

from .context import FLOATS, INTS
from .registry import converter


def _nll(ctx, node, logp, target, weight, reduction, ignore_index):
    """ONNX NegativeLogLikelihoodLoss over log-probabilities |logp| [N, C, d...]
    and integer |target| [N, d...]."""
    if logp.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % logp.dtype)
    if target.dtype not in INTS:
        raise node.error("target must be an integer tensor, got %s" % target.dtype)
    if logp.rank < 2:
        raise node.error("input must have rank >= 2, got %d" % logp.rank)
    n, c = logp.shape[:2]
    if target.shape != (n,) + logp.shape[2:]:
        raise node.error("target %s does not match input %s (expected [N, d1, ...])"
                         % (list(target.shape), list(logp.shape)))
    if weight is not None and weight.shape != (c,):
        raise node.error("weight must have shape [%d], got %s" % (c, list(weight.shape)))
    if reduction not in ("none", "sum", "mean"):
        raise node.unsupported("reduction %r" % reduction, "reduction")
    dt = logp.dtype
    target = ctx.cast(target, "i64")
    dims = [0] + list(range(2, logp.rank))
    onehot = ctx.compare("EQ", ctx.iota(logp.shape, 1, target.dtype),
                         ctx.broadcast_in_dim(target, logp.shape, dims))
    picked = ctx.reduce("sum", ctx.select(onehot, logp, ctx.scalar(0, dt)), [1])
    loss = ctx.unary("negate", picked)
    w = None
    if weight is not None:
        # ONNX takes weight[target] with indices clipped into [0, C - 1].
        w = ctx.gather(ctx.cast(weight, dt), ctx.op("clamp", [ctx.scalar(0, target.dtype),
                                                              target,
                                                              ctx.scalar(c - 1, target.dtype)]),
                       0)
    if ignore_index is not None:
        keep = ctx.compare("NE", target, ctx.scalar(ignore_index, target.dtype))
        if w is None:
            w = ctx.select(keep, ctx.scalar(1, dt), ctx.scalar(0, dt))
        else:
            w = ctx.select(keep, w, ctx.scalar(0, dt))
        loss = ctx.select(keep, loss, ctx.scalar(0, dt))
    if w is not None:
        loss = ctx.mul(loss, w)
    axes = list(range(loss.rank))
    if reduction == "none":
        return loss
    total = ctx.reduce("sum", loss, axes)
    if reduction == "sum":
        return total
    if w is not None:
        return ctx.div(total, ctx.reduce("sum", w, axes))
    return ctx.div(total, ctx.scalar(max(loss.size, 1), dt))


def _ignore_index(node):
    ii = node.attr("ignore_index")
    return None if ii is None else int(ii)


@converter("NegativeLogLikelihoodLoss", min_opset=12)
def nll_loss(ctx, node):
    x, target = node.input(0), node.input(1)
    weight = node.input(2, required=False)
    reduction = node.attr("reduction", "mean")
    return _nll(ctx, node, x, target, weight, reduction, _ignore_index(node))


@converter("SoftmaxCrossEntropyLoss", min_opset=12)
def softmax_cross_entropy_loss(ctx, node):
    """NLL of log_softmax over the class axis (1)."""
    x, target = node.input(0), node.input(1)
    weight = node.input(2, required=False)
    reduction = node.attr("reduction", "mean")
    if x.dtype not in FLOATS:
        raise node.unsupported("dtype %s" % x.dtype)
    if x.rank < 2:
        raise node.error("scores must have rank >= 2, got %d" % x.rank)
    m = ctx.reduce("max", x, [1], keepdims=True)
    z = ctx.sub(x, m)
    s = ctx.reduce("sum", ctx.unary("exp", z), [1], keepdims=True)
    logp = ctx.sub(z, ctx.unary("log", s))
    loss = _nll(ctx, node, logp, target, weight, reduction, _ignore_index(node))
    return [loss, logp]
