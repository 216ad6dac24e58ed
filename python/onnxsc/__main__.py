"""``python -m onnxsc test PATHS``: judge every ``@torch_op`` translation against PyTorch (see
``onnxsc._optest``)."""

from __future__ import annotations

import sys


def main(argv: list) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m onnxsc test PATHS... [--op OP] [--dtype DTYPE] [--samples N] [--seed N] [--jobs N]")
        print("                                   [--shard K/N] [--min-samples N] [--allow-untested] [--import MODULE]")
        print("  test   judge every @torch_op translation in PATHS against PyTorch, on PyTorch's OpInfo samples")
        print("         and on samples made to find what they miss (python -m onnxsc test --help)")
        return 0 if argv else 2
    if argv[0] == "test":
        from onnxsc._optest import main as test_main

        return test_main(argv[1:])
    print(f"python -m onnxsc: unknown command {argv[0]!r} (the command is `test`)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
