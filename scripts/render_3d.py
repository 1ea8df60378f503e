#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Render photos of physical chess sets (issue #6): a position from a real game, standing on a
board on a table, seen by a phone camera from a player's or an arbiter's seat.

Run with Blender as a Python module (PyPI `bpy`, Cycles on the CPU):

    python3.11 -m venv work-tmp/bpyenv
    work-tmp/bpyenv/bin/pip install bpy==5.0.1 chess==1.11.2
    scripts/get_3d_meshes.sh work-tmp/meshes          # piece meshes from Debian packages
    work-tmp/bpyenv/bin/python scripts/render_3d.py --out work-tmp/r3d/train --n 1200 \
        --split train --seed 1 --meshes work-tmp/meshes

Each render writes NAME.jpg, NAME.fen (placement with White at the bottom, whatever the photo
shows: the labelled-data layout of DESIGN.md) and NAME.json (`corners`: the playing area's outer
corners a1, h1, h8, a8 in pixels; `P`: the 3x4 camera matrix from board coordinates (one unit =
one square, origin at a1's outer corner, x along the files, y along the ranks, z up) to pixels;
the scene's choices).

What varies: the piece set (three meshes from Debian packages, brutalchess and dreamchess, plus
lathe-turned sets whose every proportion is drawn at random), piece colours and gloss, where each
piece stands in its square and how it is turned, the board (colours, border, coordinates, wood
grain, gloss, thickness), the table, clutter (a clock, scoresheets, captured pieces), the light
(sun, ceiling panels, lamps, sky colour), the camera (30-90 degrees above the table, any side,
24-70 mm lens, roll) and JPEG quality. `--split test` draws from choices held out of `train`:
the brutalchess set, the walnut-and-maple board with coordinates, and warm lamp lighting.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import bpy
import chess
from mathutils import Matrix, Vector

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from game_positions import draw_positions, load_games  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
KINDS = ["pawn", "knight", "bishop", "rook", "queen", "king"]
SYMBOL_KIND = {"p": "pawn", "n": "knight", "b": "bishop", "r": "rook", "q": "queen", "k": "king"}

# Held out of training: the test split draws only these, the train split never.
TEST_SET = "brutal"
TEST_BOARD = "walnut-maple"
TEST_LIGHT = "warm-lamps"
MESH_SETS = ["brutal", "dc-classic", "dc-elements"]
FORCE_SET = None   # --set, to look at one set
LATHE_SHARE = 3    # --lathe-share: lathe sets drawn this many times as often as each mesh set
STYLES = False     # --styles: lathe sets may draw a style (lathe_set)
DENOISE = True

# (light square, dark square) in linear-ish RGB 0..1
BOARD_COLOURS = {
    "cream-brown": ((0.85, 0.72, 0.52), (0.45, 0.27, 0.14)),
    "white-green": ((0.92, 0.92, 0.85), (0.25, 0.45, 0.28)),
    "yellow-black": ((0.85, 0.75, 0.35), (0.08, 0.07, 0.06)),
    "white-red": ((0.9, 0.88, 0.82), (0.45, 0.1, 0.1)),
    "buff-blue": ((0.88, 0.86, 0.8), (0.25, 0.35, 0.55)),
    "grey": ((0.75, 0.75, 0.75), (0.35, 0.35, 0.35)),
    "white-black": ((0.93, 0.93, 0.93), (0.12, 0.12, 0.12)),
    "tan-brown": ((0.78, 0.6, 0.4), (0.55, 0.35, 0.2)),
    "walnut-maple": ((0.82, 0.66, 0.42), (0.3, 0.17, 0.08)),
}
WHITE_PIECE = [(0.9, 0.86, 0.75), (0.95, 0.95, 0.93), (0.85, 0.7, 0.5), (0.8, 0.78, 0.72),
               (0.93, 0.85, 0.6)]
BLACK_PIECE = [(0.04, 0.04, 0.04), (0.15, 0.08, 0.04), (0.25, 0.12, 0.06), (0.08, 0.08, 0.1),
               (0.3, 0.05, 0.05)]
TABLE = [(0.55, 0.4, 0.25), (0.8, 0.8, 0.78), (0.3, 0.2, 0.12), (0.6, 0.6, 0.62),
         (0.9, 0.9, 0.88), (0.2, 0.25, 0.35), (0.35, 0.3, 0.25)]


# ---------------------------------------------------------------- meshes

def load_dcm(path):
    tok = Path(path).read_text().split()
    assert tok[0] == "DCM"
    n = int(tok[2])
    k = 3
    verts = [tuple(float(x) for x in tok[k + 3 * i:k + 3 * i + 3]) for i in range(n)]
    k += 3 * n + 3 * n + 2 * n  # positions, normals, texture coordinates
    groups = int(tok[k])
    k += 1
    faces = []
    for _ in range(groups):
        kind, m = tok[k], int(tok[k + 1])
        idx = [int(x) for x in tok[k + 2:k + 2 + m]]
        k += 2 + m
        if kind == "STRIP":
            for i in range(m - 2):
                a, b, c = idx[i], idx[i + 1], idx[i + 2]
                faces.append((a, b, c) if i % 2 == 0 else (b, a, c))
        else:
            faces += [tuple(idx[i:i + 3]) for i in range(0, m - 2, 3)]
    faces = [f for f in faces if len(set(f)) == 3]
    return verts, faces


def load_obj(path):
    verts, faces = [], []
    for line in Path(path).read_text(errors="replace").splitlines():
        p = line.split()
        if not p:
            continue
        if p[0] == "v":
            verts.append(tuple(float(x) for x in p[1:4]))
        elif p[0] == "f":
            idx = []
            for q in p[1:]:
                i = int(q.split("/")[0])
                idx.append(i - 1 if i > 0 else len(verts) + i)
            for j in range(1, len(idx) - 1):
                faces.append((idx[0], idx[j], idx[j + 1]))
    return verts, faces


def load_mesh_set(meshes: Path, name: str):
    """Six (verts, faces) pairs, z up, base at z = 0, centred, king height 1."""
    out = {}
    for kind in KINDS:
        f = meshes / name / (kind + (".obj" if name == "brutal" else ".dcm"))
        out[kind] = load_obj(f) if name == "brutal" else load_dcm(f)
    # up axis: the king's longest extent
    kv = out["king"][0]
    ext = [max(v[a] for v in kv) - min(v[a] for v in kv) for a in range(3)]
    up = ext.index(max(ext))
    perm = {0: (1, 2, 0), 1: (2, 0, 1), 2: (0, 1, 2)}[up]
    king_h = ext[up]
    res = {}
    for kind, (verts, faces) in out.items():
        vs = [(v[perm[0]], v[perm[1]], v[perm[2]]) for v in verts]
        zmin = min(v[2] for v in vs)
        cx = (min(v[0] for v in vs) + max(v[0] for v in vs)) / 2
        cy = (min(v[1] for v in vs) + max(v[1] for v in vs)) / 2
        res[kind] = ([((v[0] - cx) / king_h, (v[1] - cy) / king_h, (v[2] - zmin) / king_h)
                      for v in vs], faces)
    # a mesh upside down (its widest part on top) is flipped
    for kind, (vs, faces) in res.items():
        low = [math.hypot(v[0], v[1]) for v in vs if v[2] < 0.1 * max(w[2] for w in vs)]
        high = [math.hypot(v[0], v[1]) for v in vs if v[2] > 0.9 * max(w[2] for w in vs)]
        if low and high and max(high) > max(low):
            top = max(v[2] for v in vs)
            res[kind] = ([(v[0], v[1], top - v[2]) for v in vs], [tuple(reversed(f)) for f in faces])
    return res


def lathe(profile, segments=28):
    """A surface of revolution from (radius, height) points, bottom to top."""
    verts, faces = [], []
    for r, z in profile:
        for s in range(segments):
            a = 2 * math.pi * s / segments
            verts.append((r * math.cos(a), r * math.sin(a), z))
    for i in range(len(profile) - 1):
        for s in range(segments):
            a = i * segments + s
            b = i * segments + (s + 1) % segments
            faces.append((a, b, b + segments, a + segments))
    verts.append((0, 0, profile[0][1]))
    verts.append((0, 0, profile[-1][1]))
    c0, c1 = len(verts) - 2, len(verts) - 1
    top = (len(profile) - 1) * segments
    for s in range(segments):
        faces.append((c0, (s + 1) % segments, s))
        faces.append((c1, top + s, top + (s + 1) % segments))
    return verts, faces


def lathe_set(rng: random.Random):
    """A turned set with every proportion drawn at random; heights relative to the king (1).

    With --styles (session 16), half the sets also draw a style: stems from thick to
    slender, heads of other sizes, crenellated rooks, crowned queens, other cross arms and
    knight heads, or plain geometric pieces (cylinders, cones and balls). Without it the
    sets are drawn exactly as before (the shipped piece model's renders).
    """
    styled = STYLES and rng.random() < 0.5
    geometric = styled and rng.random() < 0.3
    base = rng.uniform(0.19, 0.25)   # king's base radius

    def foot(r, h):
        if geometric:
            return [(r, 0), (r, h * 0.6), (r * 0.9, h)]
        return [(r, 0), (r, h * 0.35), (r * 0.88, h * 0.5), (r * 0.92, h * 0.75), (r * 0.7, h)]

    bulge_lo, bulge_hi = (-0.3, 0.2) if styled else (-0.15, 0.1)

    def body(r0, z0, r1, z1, n=4):
        bulge = rng.uniform(bulge_lo, bulge_hi)
        return [(r0 + (r1 - r0) * t + bulge * r0 * math.sin(math.pi * t), z0 + (z1 - z0) * t)
                for t in [(i + 1) / n for i in range(n)]]

    collar_w = rng.uniform(1.3, 1.8) if styled else 1.5

    def collar(r, z, h):
        if geometric:
            return [(r, z + h)]
        return [(r * collar_w, z + h * 0.3), (r * (collar_w + 0.05), z + h * 0.6), (r * 1.1, z + h)]

    def ball(r, z0, n=7):
        return [(r * math.sin(math.pi * (i + 1) / (n + 1)), z0 + r * (1 - math.cos(math.pi * (i + 1) / (n + 1))))
                for i in range(n)] + [(0.001, z0 + 2 * r)]

    out = {}
    fh = rng.uniform(0.06, 0.1) if not styled else rng.uniform(0.04, 0.14)
    # heights relative to the king, drawn in order: sets differ a lot here (a tall pawn
    # must not read as a bishop), so the ranges are wide
    hk = 1.0
    hp = rng.uniform(0.44, 0.66) if not styled else rng.uniform(0.42, 0.7)
    hr = min(0.8, hp + rng.uniform(0.03, 0.14))
    hn = min(0.85, hr + rng.uniform(0.0, 0.15))
    hb = min(0.88, max(hr + 0.05, hn + rng.uniform(-0.03, 0.12)))
    hq = rng.uniform(max(0.84, hb + 0.05), 0.96)
    neck = rng.uniform(0.28, 0.4) if not styled else rng.uniform(0.18, 0.48)
    # pawn
    rp = base * rng.uniform(0.72, 0.82)
    head = 0.55 if not styled else rng.uniform(0.4, 0.75)
    z = fh * 0.8
    if styled:
        top = hp - 2 * rp * head
        prof = foot(rp, z) + body(rp * 0.7, z, rp * neck * 1.2, top * 0.9) + collar(rp * neck, top * 0.9, top * 0.1)
        out["pawn"] = lathe(prof + ball(rp * head, top)[:-1] + [(0.001, hp)])
    else:
        prof = foot(rp, z) + body(rp * 0.7, z, rp * neck * 1.2, hp * 0.6) + collar(rp * neck, hp * 0.6, hp * 0.08)
        out["pawn"] = lathe(prof + ball(rp * 0.55, hp * 0.68 + 0.0)[:-1] + [(0.001, hp)])
    # rook
    rr = base * rng.uniform(0.85, 0.95)
    if styled:
        rtop = rr * rng.uniform(0.65, 0.95)
        prof = foot(rr, fh) + body(rr * 0.8, fh, rr * 0.62, hr * 0.7) + \
            [(rtop * 0.97, hr * 0.75), (rtop, hr), (rtop * 0.7, hr), (rtop * 0.7, hr * 0.9), (0.001, hr * 0.9)]
    else:
        prof = foot(rr, fh) + body(rr * 0.8, fh, rr * 0.62, hr * 0.7) + \
            [(rr * 0.78, hr * 0.75), (rr * 0.8, hr), (rr * 0.55, hr), (rr * 0.55, hr * 0.9), (0.001, hr * 0.9)]
    rv, rf = lathe(prof)
    if styled and rng.random() < 0.7:   # crenellations round the rim
        n = rng.choice([4, 5, 6])
        cz = rng.uniform(0.05, 0.09)
        for i in range(n):
            a = 2 * math.pi * i / n
            cx, cy = rtop * 0.85 * math.cos(a), rtop * 0.85 * math.sin(a)
            rv, rf = add_box(rv, rf, (cx, cy, hr + cz / 2), (rtop * 0.18, rtop * 0.18, cz / 2))
    out["rook"] = (rv, rf)
    # bishop
    rb = base * rng.uniform(0.85, 0.95)
    mitre = 1.0 if not styled else rng.uniform(0.75, 1.35)
    prof = foot(rb, fh) + body(rb * 0.72, fh, rb * neck, hb * 0.55) + collar(rb * neck, hb * 0.55, hb * 0.06)
    if geometric:   # a cone and a ball
        prof += [(rb * 0.5, hb * 0.62), (rb * 0.08, hb * 0.92)]
    else:
        prof += [(rb * 0.45 * mitre, hb * 0.7), (rb * 0.52 * mitre, hb * 0.8), (rb * 0.35 * mitre, hb * 0.9),
                 (rb * 0.12, hb * 0.95)]
    prof += ball(rb * 0.09, hb * 0.95)[:-1] + [(0.001, hb)]
    out["bishop"] = lathe(prof)
    # queen
    rq = base * rng.uniform(0.95, 1.0)
    crown = 1.0 if not styled else rng.uniform(0.8, 1.3)
    prof = foot(rq, fh) + body(rq * 0.72, fh, rq * neck, hq * 0.62) + collar(rq * neck, hq * 0.62, hq * 0.06)
    prof += [(rq * 0.55 * crown, hq * 0.82), (rq * 0.6 * crown, hq * 0.88), (rq * 0.4 * crown, hq * 0.9)]
    prof += ball(rq * 0.12, hq * 0.9 + 0.005)[:-1] + [(0.001, hq)]
    qv, qf = lathe(prof)
    if styled and rng.random() < 0.6:   # a ring of points round the crown
        n = rng.choice([6, 8, 10])
        pz = rng.uniform(0.03, 0.06)
        for i in range(n):
            a = 2 * math.pi * i / n
            qv, qf = add_box(qv, qf, (rq * 0.55 * crown * math.cos(a), rq * 0.55 * crown * math.sin(a), hq * 0.88 + pz / 2),
                             (0.012, 0.012, pz / 2))
    out["queen"] = (qv, qf)
    # king: a queen-like body and a cross (or, in some styles, a ball and a short cross)
    prof = foot(base, fh) + body(base * 0.72, fh, base * neck, hk * 0.6) + collar(base * neck, hk * 0.6, hk * 0.06)
    prof += [(base * 0.55, hk * 0.78), (base * 0.6, hk * 0.84), (base * 0.2, hk * 0.86), (0.001, hk * 0.86)]
    kv, kf = lathe(prof)
    cw = rng.uniform(0.035, 0.05)
    arm = 2.6 if not styled else rng.uniform(1.8, 3.2)
    kv, kf = add_box(kv, kf, (0, 0, hk * 0.93), (cw, cw, hk * 0.07))
    kv, kf = add_box(kv, kf, (0, 0, hk * 0.94), (cw * arm, cw, cw))
    out["king"] = (kv, kf)
    # knight: a turned foot and an extruded head in profile
    rn = base * rng.uniform(0.88, 0.95)
    nv, nf = lathe(foot(rn, fh) + [(rn * 0.7, fh * 1.4), (0.001, fh * 1.4)])
    head = [(-0.5, 0.0), (0.45, 0.0), (0.42, 0.35), (0.1, 0.6), (0.55, 0.72), (0.62, 0.85),
            (0.2, 1.0), (0.0, 1.08), (-0.15, 0.98), (-0.45, 0.7), (-0.55, 0.35)]
    hj = 0.05 if not styled else 0.1
    jit = [(x + rng.uniform(-hj, hj), y + rng.uniform(-0.04, 0.04)) for x, y in head]
    sx, sy, th = rn * rng.uniform(1.4, 1.7), hn - fh * 1.4, rn * (rng.uniform(0.5, 0.7) if not styled else rng.uniform(0.4, 0.85))
    nv, nf = add_prism(nv, nf, [(x * sx, fh * 1.4 + y * sy) for x, y in jit], th)
    out["knight"] = (nv, nf)
    return out


def add_box(verts, faces, centre, half):
    cx, cy, cz = centre
    hx, hy, hz = half
    o = len(verts)
    for dx in (-1, 1):
        for dy in (-1, 1):
            for dz in (-1, 1):
                verts.append((cx + dx * hx, cy + dy * hy, cz + dz * hz))
    faces = faces + [(o + a, o + b, o + c, o + d) for a, b, c, d in
                     [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]]
    return verts, faces


def add_prism(verts, faces, poly, thick):
    """The polygon (x, z) extruded along y by `thick`."""
    o = len(verts)
    n = len(poly)
    for y in (-thick / 2, thick / 2):
        for x, z in poly:
            verts.append((x, y, z))
    faces = faces + [tuple(o + i for i in range(n)), tuple(o + n + i for i in reversed(range(n)))]
    for i in range(n):
        j = (i + 1) % n
        faces.append((o + i, o + j, o + n + j, o + n + i))
    return verts, faces


# ---------------------------------------------------------------- scene

def material(name, colour, rough, grain=None, rng=None):
    m = bpy.data.materials.new(name)
    m.use_nodes = True
    nt = m.node_tree
    bsdf = nt.nodes["Principled BSDF"]
    bsdf.inputs["Roughness"].default_value = rough
    if grain is None:
        bsdf.inputs["Base Color"].default_value = (*colour, 1)
    else:
        # wood-like grain: stretched noise between two close colours
        tex = nt.nodes.new("ShaderNodeTexNoise")
        tex.inputs["Scale"].default_value = rng.uniform(2, 8)
        tex.inputs["Detail"].default_value = 6
        coord = nt.nodes.new("ShaderNodeTexCoord")
        mapping = nt.nodes.new("ShaderNodeMapping")
        mapping.inputs["Scale"].default_value = (1, rng.uniform(8, 20), 1)
        nt.links.new(coord.outputs["Object"], mapping.inputs["Vector"])
        nt.links.new(mapping.outputs["Vector"], tex.inputs["Vector"])
        ramp = nt.nodes.new("ShaderNodeValToRGB")
        ramp.color_ramp.elements[0].color = (*[c * (1 - grain) for c in colour], 1)
        ramp.color_ramp.elements[1].color = (*[min(1, c * (1 + grain)) for c in colour], 1)
        nt.links.new(tex.outputs["Fac"], ramp.inputs["Fac"])
        nt.links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
    return m


def mesh_object(name, verts, faces, mat, smooth=True):
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts, [], faces)
    me.validate()
    if smooth:
        for p in me.polygons:
            p.use_smooth = True
    ob = bpy.data.objects.new(name, me)
    ob.data.materials.append(mat)
    bpy.context.collection.objects.link(ob)
    return ob


def box(name, centre, size, mat):
    v, f = add_box([], [], (0, 0, 0), (size[0] / 2, size[1] / 2, size[2] / 2))
    ob = mesh_object(name, v, f, mat, smooth=False)
    ob.location = centre
    return ob


def board_material(rng, light, dark, grain):
    """The 8x8 checker over the playing area [0,8]^2 (object coordinates)."""
    m = bpy.data.materials.new("squares")
    m.use_nodes = True
    nt = m.node_tree
    bsdf = nt.nodes["Principled BSDF"]
    bsdf.inputs["Roughness"].default_value = rng.uniform(0.15, 0.7)
    coord = nt.nodes.new("ShaderNodeTexCoord")
    checker = nt.nodes.new("ShaderNodeTexChecker")
    checker.inputs["Scale"].default_value = 1.0
    # Blender's checker has one check per unit at scale 1 and takes colour 1 where
    # (floor(x) and floor(y) have the same parity) == (floor(z) is odd); on the plane z = 0
    # that is where their parities differ, so colour 2 falls on a1 (x, y in [0, 1)): dark.
    # (Renders made before this was fixed have a1 light; see models/corners3d.md.)
    nt.links.new(coord.outputs["Object"], checker.inputs["Vector"])
    checker.inputs["Color1"].default_value = (*light, 1)
    checker.inputs["Color2"].default_value = (*dark, 1)
    if grain:
        noise = nt.nodes.new("ShaderNodeTexNoise")
        noise.inputs["Scale"].default_value = rng.uniform(3, 10)
        mp2 = nt.nodes.new("ShaderNodeMapping")
        mp2.inputs["Scale"].default_value = (1, rng.uniform(6, 15), 1)
        nt.links.new(coord.outputs["Object"], mp2.inputs["Vector"])
        nt.links.new(mp2.outputs["Vector"], noise.inputs["Vector"])
        mix = nt.nodes.new("ShaderNodeMix")
        mix.data_type = "RGBA"
        mix.blend_type = "MULTIPLY"
        mix.inputs["Factor"].default_value = rng.uniform(0.2, 0.5)
        nt.links.new(checker.outputs["Color"], mix.inputs["A"])
        nt.links.new(noise.outputs["Color"], mix.inputs["B"])
        nt.links.new(mix.outputs["Result"], bsdf.inputs["Base Color"])
    else:
        nt.links.new(checker.outputs["Color"], bsdf.inputs["Base Color"])
    return m


def coordinates(rng, border, colour):
    """Letters a-h and digits 1-8 printed on the border, White's side at y < 0."""
    mat = material("coords", colour, 0.6)
    size = min(0.45, border * 0.6)
    font = None
    for f in ["/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
              "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"]:
        if os.path.exists(f):
            font = bpy.data.fonts.load(f)
            break
    labels = [(c, i + 0.5, -border / 2) for i, c in enumerate("abcdefgh")]
    labels += [(str(i + 1), -border / 2, i + 0.5) for i in range(8)]
    if rng.random() < 0.6:
        labels += [(c, i + 0.5, 8 + border / 2) for i, c in enumerate("abcdefgh")]
        labels += [(str(i + 1), 8 + border / 2, i + 0.5) for i in range(8)]
    for text, x, y in labels:
        cu = bpy.data.curves.new("t", "FONT")
        cu.body = text
        cu.size = size
        cu.align_x = "CENTER"
        cu.align_y = "CENTER"
        if font:
            cu.font = font
        ob = bpy.data.objects.new("t", cu)
        ob.location = (x, y, 0.002)
        ob.data.materials.append(mat)
        bpy.context.collection.objects.link(ob)


def build_scene(rng, split, meshes, sets_cache, board_fen):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    meta = {}

    # board
    names = [n for n in BOARD_COLOURS if (n == TEST_BOARD) == (split == "test")]
    bname = rng.choice(names)
    light_c, dark_c = BOARD_COLOURS[bname]
    light_c = tuple(min(1, c * rng.uniform(0.9, 1.1)) for c in light_c)
    dark_c = tuple(min(1, c * rng.uniform(0.85, 1.15)) for c in dark_c)
    grain = bname in ("walnut-maple", "cream-brown", "tan-brown") or rng.random() < 0.2
    border = rng.uniform(0.15, 0.9) if bname != TEST_BOARD else rng.uniform(0.4, 0.7)
    thick = rng.choice([0.02, 0.1, 0.3])
    frame_c = rng.choice([dark_c, light_c, (0.1, 0.1, 0.1), (0.9, 0.9, 0.9), (0.35, 0.2, 0.1)])
    meta["board"] = bname
    sq = board_material(rng, light_c, dark_c, grain)
    plane_v = [(0, 0, 0), (8, 0, 0), (8, 8, 0), (0, 8, 0)]
    mesh_object("squares", plane_v, [(0, 1, 2, 3)], sq, smooth=False).location = (0, 0, 0.001)
    frame = material("frame", frame_c, rng.uniform(0.2, 0.7), 0.3 if grain else None, rng)
    box("frame", (4, 4, -thick / 2), (8 + 2 * border, 8 + 2 * border, thick), frame)
    if bname == TEST_BOARD or rng.random() < 0.45:
        coordinates(rng, border, light_c if frame_c == dark_c else
                    (dark_c if sum(frame_c) > 1.5 else (0.85, 0.85, 0.8)))
        meta["coordinates"] = True

    # table, far larger than the view
    tmat = material("table", rng.choice(TABLE), rng.uniform(0.3, 0.9), rng.uniform(0.1, 0.4) if rng.random() < 0.6 else None, rng)
    box("table", (4, 4, -thick - 0.05), (80, 80, 0.1), tmat)

    # pieces
    if FORCE_SET:
        set_name = FORCE_SET
    elif split == "test":
        set_name = TEST_SET
    else:
        set_name = rng.choice([s for s in MESH_SETS if s != TEST_SET] + ["lathe"] * LATHE_SHARE)
    if set_name == "lathe":
        pieces = lathe_set(rng)
    else:
        if set_name not in sets_cache:
            sets_cache[set_name] = load_mesh_set(meshes, set_name)
        pieces = sets_cache[set_name]
    meta["set"] = set_name
    king_h = rng.uniform(1.45, 2.0)   # king height in squares
    meta["king_height"] = king_h
    wcol = rng.choice(WHITE_PIECE)
    bcol = rng.choice(BLACK_PIECE)
    if rng.random() < 0.15:   # a set in unusual colours (red/green/blue plastic)
        wcol, bcol = rng.choice([((0.9, 0.85, 0.2), (0.6, 0.05, 0.05)), ((0.2, 0.6, 0.2), (0.9, 0.5, 0.1)),
                                 ((0.85, 0.85, 0.9), (0.1, 0.2, 0.6))])
    wood = rng.random() < 0.3
    wmat = material("white", wcol, rng.uniform(0.15, 0.6), 0.25 if wood else None, rng)
    bmat = material("black", bcol, rng.uniform(0.15, 0.6), 0.35 if wood else None, rng)
    board = chess.Board(board_fen + " w - - 0 1")
    meshes_made = {}

    # mesh sets in training: each kind but the king stretched (-15 % to +25 %), so that proportions
    # vary as between real sets
    stretch = {k: (rng.uniform(0.85, 1.25) if split == "train" and set_name != "lathe" and k != "king" else 1.0)
               for k in KINDS}

    # each kind's height in squares as it stands on the board (the mesh's top, scaled)
    meta["heights"] = {k: round(king_h * stretch[k] * max(v[2] for v in pieces[k][0]), 4) for k in KINDS}

    def piece(kind, white, x, y, rot):
        key = (kind, white)
        v, f = pieces[kind]
        ob = mesh_object(kind, v, f, wmat if white else bmat)
        if key not in meshes_made:
            meshes_made[key] = ob.data
        ob.scale = (king_h, king_h, king_h * stretch[kind])
        ob.location = (x, y, 0)
        ob.rotation_euler = (0, 0, rot)
        return ob

    jit = rng.uniform(0.02, 0.1)
    for sqr, p in board.piece_map().items():
        f, r = chess.square_file(sqr), chess.square_rank(sqr)
        dx = max(-0.2, min(0.2, rng.gauss(0, jit)))
        dy = max(-0.2, min(0.2, rng.gauss(0, jit)))
        kind = SYMBOL_KIND[p.symbol().lower()]
        if kind == "knight":
            rot = (math.pi / 2 if p.color else -math.pi / 2) + rng.uniform(-1.2, 1.2)
        else:
            rot = rng.uniform(0, 2 * math.pi)
        piece(kind, p.color, f + 0.5 + dx, r + 0.5 + dy, rot)

    # captured pieces on the table beside the board
    if rng.random() < 0.5:
        full = {"pawn": 8, "knight": 2, "bishop": 2, "rook": 2, "queen": 1}
        for white in (True, False):
            side = 1 if rng.random() < 0.5 else -1
            k = 0
            for kind, n in full.items():
                have = len(board.pieces(KINDS.index(kind) + 1, white))
                for _ in range(max(0, n - have)):
                    x = 4 + side * (4 + border + 0.8 + (k % 3) * 0.9 + rng.uniform(-0.2, 0.2))
                    y = (1.5 if white else 6.5) + (k // 3) * 0.9 * (1 if white else -1) + rng.uniform(-0.2, 0.2)
                    ob = piece(kind, white, x, y, rng.uniform(0, 6.3))
                    ob.location.z = -thick
                    k += 1

    # clutter: a clock and a scoresheet
    if rng.random() < 0.6:
        side = rng.choice([-1, 1])
        cmat = material("clock", rng.choice([(0.05, 0.05, 0.05), (0.6, 0.6, 0.6), (0.4, 0.25, 0.1)]), 0.4)
        box("clock", (4 + side * (4 + border + 1.6), 4 + rng.uniform(-1, 1), -thick + 0.6), (1.2, 3.0, 1.2), cmat)
    if rng.random() < 0.6:
        pmat = material("paper", (0.92, 0.92, 0.9), 0.9)
        x = rng.choice([-border - 2.5, 8 + border + 2.5])
        ob = box("sheet", (x, rng.uniform(-2, 3), -thick + 0.002), (3.0, 4.2, 0.004), pmat)
        ob.rotation_euler = (0, 0, rng.uniform(-0.5, 0.5))

    # light
    world = bpy.data.worlds.new("w")
    scene.world = world
    world.use_nodes = True
    bg = world.node_tree.nodes["Background"]
    lights = [n for n in ("sun", "ceiling", "sky", TEST_LIGHT) if (n == TEST_LIGHT) == (split == "test")]
    lname = rng.choice(lights)
    meta["light"] = lname
    tint = (rng.uniform(0.8, 1), rng.uniform(0.8, 1), rng.uniform(0.8, 1))
    bg.inputs["Color"].default_value = (*tint, 1)
    bg.inputs["Strength"].default_value = rng.uniform(0.2, 0.8)
    if lname == "sun":
        ld = bpy.data.lights.new("sun", "SUN")
        ld.energy = rng.uniform(1, 3)
        ld.angle = math.radians(rng.uniform(1, 25))
        ob = bpy.data.objects.new("sun", ld)
        ob.rotation_euler = (math.radians(rng.uniform(10, 60)), 0, rng.uniform(0, 2 * math.pi))
        bpy.context.collection.objects.link(ob)
    elif lname == "ceiling":
        for i in range(rng.randint(1, 4)):
            ld = bpy.data.lights.new("panel", "AREA")
            ld.energy = rng.uniform(800, 3000)
            ld.size = rng.uniform(2, 8)
            ob = bpy.data.objects.new("panel", ld)
            ob.location = (4 + rng.uniform(-12, 12), 4 + rng.uniform(-12, 12), rng.uniform(12, 20))
            bpy.context.collection.objects.link(ob)
    elif lname == "sky":
        bg.inputs["Strength"].default_value = rng.uniform(0.8, 1.6)
    else:   # warm lamps: two or three point lights, orange-ish
        for i in range(rng.randint(2, 3)):
            ld = bpy.data.lights.new("lamp", "POINT")
            ld.energy = rng.uniform(1500, 4000)
            ld.color = (1.0, rng.uniform(0.7, 0.85), rng.uniform(0.45, 0.6))
            ld.shadow_soft_size = rng.uniform(0.2, 1.5)
            ob = bpy.data.objects.new("lamp", ld)
            ob.location = (4 + rng.uniform(-10, 10), 4 + rng.uniform(-10, 10), rng.uniform(6, 14))
            bpy.context.collection.objects.link(ob)
    return meta, border


def place_camera(rng, border, width, height):
    scene = bpy.context.scene
    cd = bpy.data.cameras.new("cam")
    cd.sensor_fit = "HORIZONTAL" if width >= height else "VERTICAL"
    cd.sensor_width = 36
    cd.sensor_height = 36
    cd.lens = rng.uniform(24, 70)
    cam = bpy.data.objects.new("cam", cd)
    bpy.context.collection.objects.link(cam)
    scene.camera = cam
    elev = math.radians(rng.uniform(30, 90))
    seat = rng.random()
    if seat < 0.4:
        az = -90
    elif seat < 0.7:
        az = 90
    else:
        az = rng.choice([0, 180])
    az = math.radians(az + rng.uniform(-35, 35))
    # distance so that the board's half diagonal takes a chosen share of the half view
    fov = 2 * math.atan(18 / cd.lens)
    fill = rng.uniform(0.55, 0.95)
    half = (4 + border * 0.5) * math.sqrt(2)
    dist = half / math.tan(fov / 2 * fill) * rng.uniform(0.95, 1.1)
    target = Vector((4 + rng.uniform(-0.6, 0.6), 4 + rng.uniform(-0.6, 0.6), 0))
    pos = target + dist * Vector((math.cos(elev) * math.cos(az), math.cos(elev) * math.sin(az), math.sin(elev)))
    cam.location = pos
    direction = target - pos
    rot = direction.to_track_quat("-Z", "Y" if elev < math.radians(89) else "Y")
    cam.rotation_euler = rot.to_euler()
    cam.rotation_euler.rotate_axis("Z", math.radians(rng.uniform(-6, 6)))
    bpy.context.view_layer.update()
    return cam, math.degrees(elev), math.degrees(az)


def projection(cam, width, height):
    """3x4 matrix from world (= board) coordinates to pixels (x right, y down)."""
    cd = cam.data
    if cd.sensor_fit == "VERTICAL":
        f = cd.lens / cd.sensor_height * height
    else:
        f = cd.lens / cd.sensor_width * width
    K = Matrix(((f, 0, width / 2), (0, f, height / 2), (0, 0, 1)))
    w2c = cam.matrix_world.inverted()
    flip = Matrix(((1, 0, 0, 0), (0, -1, 0, 0), (0, 0, -1, 0)))   # Blender camera looks down -Z, y up
    P = K @ (flip @ w2c)
    return [[P[i][j] for j in range(4)] for i in range(3)], f


def project(P, p):
    v = [sum(P[i][j] * c for j, c in enumerate((*p, 1))) for i in range(3)]
    return [v[0] / v[2], v[1] / v[2]]


def positions(rng, n):
    return [fen for _, fen in draw_positions(rng, load_games(), n)]


def add_meta(srng, args, cache, done):
    """--meta-only: builds the scene of the rendered views `done` (their JSON paths) again
    from its seed and adds to each view's JSON what it lacks, after checking that the scene
    is the one rendered."""
    if not done:
        return
    fen = (done[0].parent / (done[0].stem + ".fen")).read_text().split()[0]
    meta, _ = build_scene(srng, args.split, Path(args.meshes), cache, fen)
    for v in done:
        old = json.loads(v.read_text())
        if any(k in old and old[k] != meta[k] for k in ("set", "king_height", "light")):
            sys.exit(f"{v}: the scene built again differs from the one rendered (other --seed, "
                     "--split, --styles or --lathe-share?)")
        old.update({k: x for k, x in meta.items() if k not in old})
        v.write_text(json.dumps(old, indent=1) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=100, help="scenes")
    ap.add_argument("--views", type=int, default=2, help="camera views per scene")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--split", choices=["train", "test"], default="train")
    ap.add_argument("--meshes", default=str(ROOT / "work-tmp" / "meshes"))
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--set", help="only this piece set (to look at it)")
    ap.add_argument("--styles", action="store_true",
                    help="half the lathe-turned sets draw a style (slender stems, crenellated rooks, "
                         "crowned queens, geometric pieces ...); see lathe_set")
    ap.add_argument("--lathe-share", type=int, default=3,
                    help="lathe-turned sets are drawn this many times as often as each mesh set")
    ap.add_argument("--no-denoise", action="store_true")
    ap.add_argument("--scale", type=int, default=1,
                    help="render each view this many times wider and taller: the same scene and camera "
                         "(the view depends on the aspect only), more pixels per square. At 1, squares "
                         "are about 29 px (median); photos of sets read at hamle's working size, 70-98")
    ap.add_argument("--start", type=int, default=0, help="first scene (to resume or shard)")
    ap.add_argument("--meta-only", action="store_true",
                    help="render nothing: build each scene again from its seed and add what the scene's "
                         "JSON lacks (e.g. `heights`, recorded since session 52) to the views already in --out")
    ap.add_argument("--fens", help="file of `NAME FEN` lines: render these positions, one view "
                    "each, as NAME.jpg (e.g. games' final positions for hamle eval sheets "
                    "--final-boards); --n and --views are then ignored")
    args = ap.parse_args(sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else None)
    global FORCE_SET, LATHE_SHARE, STYLES
    FORCE_SET = args.set
    LATHE_SHARE = args.lathe_share
    STYLES = args.styles
    global DENOISE
    DENOISE = not args.no_denoise
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    names = None
    if args.fens:
        pairs = [ln.split(None, 1) for ln in Path(args.fens).read_text().splitlines() if ln.strip()]
        names = [a for a, _ in pairs]
        fens = [b.split()[0] for _, b in pairs]
        args.n, args.views = len(fens), 1
    else:
        fens = positions(rng, args.n)
    cache = {}
    for i in range(args.start, args.n):
        srng = random.Random(args.seed * 1_000_003 + i)
        name0 = f"{args.split}-{args.seed}-{i:05d}"
        views = [f"{name0}-{v}" for v in range(args.views)] if names is None else [names[i]]
        if args.meta_only:
            add_meta(srng, args, cache, [out / f"{v}.json" for v in views if (out / f"{v}.json").exists()])
            continue
        if all((out / f"{v}.json").exists() for v in views):
            continue
        meta, border = build_scene(srng, args.split, Path(args.meshes), cache, fens[i])
        scene = bpy.context.scene
        scene.render.engine = "CYCLES"
        scene.cycles.device = "CPU"
        scene.cycles.samples = args.samples
        scene.cycles.use_denoising = DENOISE
        scene.render.use_persistent_data = True
        scene.cycles.max_bounces = 3
        scene.view_settings.view_transform = "Standard"
        scene.view_settings.exposure = srng.uniform(-1.2, 0)
        scene.view_settings.look = srng.choice(["None", "Medium Contrast", "Medium High Contrast"])
        scene.render.threads_mode = "FIXED"
        scene.render.threads = args.threads
        scene.render.image_settings.file_format = "JPEG"
        for name in views:
            w, h = srng.choice([(512, 384), (384, 512), (480, 480), (576, 324)])
            w, h = w * args.scale, h * args.scale
            scene.render.resolution_x, scene.render.resolution_y = w, h
            scene.render.resolution_percentage = 100
            scene.render.image_settings.quality = srng.randint(70, 95)
            for ob in [o for o in bpy.data.objects if o.type == "CAMERA"]:
                bpy.data.objects.remove(ob)
            cam, elev, az = place_camera(srng, border, w, h)
            P, f = projection(cam, w, h)
            scene.render.filepath = str(out / (name + ".jpg"))
            t0 = time.time()
            bpy.ops.render.render(write_still=True)
            rtime = time.time() - t0
            corners = [project(P, c) for c in [(0, 0, 0), (8, 0, 0), (8, 8, 0), (0, 8, 0)]]
            (out / (name + ".fen")).write_text(fens[i] + "\n")
            (out / (name + ".json")).write_text(json.dumps({
                "width": w, "height": h, "corners": corners, "P": P, "focal_px": f,
                "elevation": elev, "azimuth": az, "split": args.split, **meta}, indent=1) + "\n")
        print(f"{name0} {meta} render {rtime:.1f} s", flush=True)


if __name__ == "__main__":
    main()
