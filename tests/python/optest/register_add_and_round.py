"""Registers the tutorial's custom operator with PyTorch, as a program would before exporting
(`python -m onnxsc test --import register_add_and_round`)."""

import torch


@torch.library.custom_op("mylibrary::add_and_round_op", mutates_args=())
def add_and_round_op(input: torch.Tensor) -> torch.Tensor:
    return torch.round(input + input)


@add_and_round_op.register_fake
def _(input):
    return torch.empty_like(input)
