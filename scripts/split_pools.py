#!/usr/bin/env python3
"""Rewrites an ONNX model's 2x2 max pools (stride 2, no padding) as a 2x1 pool followed by a
1x2 pool: the same maximum over the same four pixels, so the same values, but tract runs it
faster.

tract 0.23 has a special kernel for 2x2 f32 pools that took 9.5 % of the cell recognizer's
time on one core (perf, session 20); the two one-axis pools take its general path, and all
four pools of the rewritten model take 3.8 %. Two other rewrites were slower in tract
(`examples/cell_models.rs`, one core): Reshape + ReduceMax about 6x slower for the whole
model, four strided Slices + Max no faster than the original.

    python3 scripts/split_pools.py models/cells.onnx models/cells.onnx
"""

import argparse

import onnx
from onnx import helper


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def split_pools(model):
    nodes = []
    done = 0
    for node in model.graph.node:
        plain_2x2 = (
            node.op_type == "MaxPool"
            and list(attr(node, "kernel_shape", [])) == [2, 2]
            and list(attr(node, "strides", [1, 1])) == [2, 2]
            and not any(attr(node, "pads", []))
            and all(d == 1 for d in attr(node, "dilations", []))
            and attr(node, "ceil_mode", 0) == 0
            and len(node.output) == 1
        )
        if not plain_2x2:
            nodes.append(node)
            continue
        rows = node.output[0] + "/rows"
        nodes.append(helper.make_node("MaxPool", [node.input[0]], [rows],
                                      name=node.name + "/rows", kernel_shape=[2, 1], strides=[2, 1]))
        nodes.append(helper.make_node("MaxPool", [rows], list(node.output),
                                      name=node.name + "/cols", kernel_shape=[1, 2], strides=[1, 2]))
        done += 1
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    model.graph.ClearField("value_info")
    onnx.checker.check_model(model)
    return done


def split_pools_file(path):
    """Splits the 2x2 max pools of the ONNX file at `path` in place (the training scripts'
    exports call this, so a rebuilt model is the one shipped)."""
    model = onnx.load(path)
    n = split_pools(model)
    onnx.save(model, path)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    a = ap.parse_args()
    model = onnx.load(a.src)
    n = split_pools(model)
    onnx.save(model, a.dst)
    print(f"{a.dst}: {n} 2x2 max pools split")


if __name__ == "__main__":
    main()
