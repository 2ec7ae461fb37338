"""Shared pieces of the Python suites."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import accy  # noqa: E402

SRCDIR = os.environ.get("ACCY_TEST_SRCDIR") or os.path.dirname(os.path.dirname(HERE))

MLP_TEXT = """
%x = parameter "x" : f32[2,3]
%w = constant "w" : f32[3,2] [1, 2, 3, 4, 5, 6]
%b = constant "b" : f32[2] [0.5, -0.5]
%h = dot_general %x, %w lhs_contract=[1] rhs_contract=[0]
%bb = broadcast_in_dim %b dims=[1] : f32[2,2]
%y = add %h, %bb
output %y "y"
"""


def mlp_wire():
    return accy.assemble(MLP_TEXT)


def mlp_reference(x):
    import numpy as np
    w = np.arange(1, 7, dtype=np.float32).reshape(3, 2)
    return x @ w + np.array([0.5, -0.5], np.float32)
