#!/usr/bin/env python
"""Show or set a model's ONNX metadata (what gammago.net.runtime reads: board_sizes, generation, net_lambda).

    python tools/model_metadata.py models/gammago-net-9x9-g1.onnx                  # show
    python tools/model_metadata.py models/gammago-net-9x9-g1.onnx net_lambda=0.5   # set, in place

Setting a key is for what is decided after training, in games: the net_lambda a net won with
(models/README.md, its card). The file is rewritten through a temporary file and a rename, and
read back through gammago.net.runtime, which refuses it if the result does not load. Needs the onnx package
(the [train] extra).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("set", nargs="*", metavar="KEY=VALUE")
    args = ap.parse_args(argv)
    import onnx
    from gammago.net import runtime as N
    pairs = []
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"model_metadata: {item!r} is not KEY=VALUE")
        pairs.append((key, value))
    if pairs:
        proto = onnx.load(args.model)
        have = {p.key: p for p in proto.metadata_props}
        for key, value in pairs:
            if key in have:
                have[key].value = value
            else:
                e = proto.metadata_props.add()
                e.key, e.value = key, value
        tmp = args.model + ".tmp"
        onnx.save(proto, tmp)
        os.replace(tmp, args.model)
    meta = N.Net(args.model).metadata
    for key in sorted(meta):
        value = meta[key]
        print(f"{key}: {value if len(value) < 200 else value[:200] + '...'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
