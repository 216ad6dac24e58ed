"""Differential testing with generated programs: onnxsc against onnxscript 0.7.2.

`generator` writes seeded, valid ONNX Script modules; `oracle` compiles each with both
compilers and runs both results in ONNX Runtime on the same inputs; `reduce` shrinks a program
the two disagree on; `__main__` is `scripts/difftest`. See docs/robustness.md.
"""
