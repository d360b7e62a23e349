"""Synthetic tread renderer: a height-field tire seen by a phone camera.

A tire is a cylinder (axis x, radius R). Its tread is one periodic tile of a
height field (surface 0, grooves negative, in mm) plus a wear profile that
lowers the surface across the width, plus TWI bars 1.6 mm tall in the main
grooves. Each output pixel casts a ray at the cylinder, marches the height
field (parallax occlusion: groove walls hide groove bottoms in oblique views),
shades the hit from its normal, an ambient-occlusion term and shadows marched
toward every light, then a phone pipeline adds exposure, white balance, blur,
noise and JPEG. Everything is drawn from one numpy Generator, so a seed
reproduces an image exactly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

TWI_HEIGHT_MM = 1.6
RES = 0.5  # mm per tile pixel

BG_NONE, BG_TREAD, BG_GROOVE, BG_TWI = 0, 1, 2, 3


@dataclass
class Tire:
    radius: float
    width: float  # tread width, mm
    shoulder: float
    orig_depth: float
    tile_h: np.ndarray  # (rows=v, cols=u) original height, mm
    groove_id: np.ndarray  # main-groove index+1 per tile column, 0 elsewhere
    groove_centers: list[float]
    albedo: np.ndarray  # (rows, cols, 3) linear
    wear_u: np.ndarray  # wear per tile column, mm
    twi_angles: np.ndarray
    twi_len: float
    u0: float  # u of tile column 0
    pitch_len: float
    groove_depths: list[float] = field(default_factory=list)


def _noise(rng, shape, scales, wrap=True):
    out = np.zeros(shape, np.float32)
    for s, amp in scales:
        small = rng.standard_normal((max(2, int(shape[0] / s)), max(2, int(shape[1] / s)))).astype(np.float32)
        out += amp * cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)
    return out


def _draw_line_mask(shape, pts, width_px):
    m = np.zeros(shape, np.uint8)
    cv2.polylines(m, [np.round(np.array(pts) * 4).astype(np.int32)], False, 255, max(1, int(round(width_px))), cv2.LINE_AA, shift=2)
    return m.astype(np.float32) / 255.0


def make_tire(rng: np.random.Generator, min_depth: float) -> Tire:
    """A tire whose shallowest main groove is `min_depth` mm deep."""
    width = rng.uniform(135, 335)
    radius = rng.uniform(275, 400)
    shoulder = rng.uniform(10, 25)
    orig = max(rng.uniform(7.5, 10.0) if rng.random() < 0.85 else rng.uniform(10, 12.5), min_depth + rng.uniform(0.2, 1.0))
    pitch = rng.uniform(18, 42)
    n_pitch = max(1, int(math.ceil(70 / pitch)))
    tile_len = pitch * n_pitch
    cols = int(round((width + 2 * shoulder) / RES))
    rows = int(round(tile_len / RES))
    u0 = -(width / 2 + shoulder)
    us = u0 + (np.arange(cols) + 0.5) * RES
    h = np.zeros((rows, cols), np.float32)

    n_main = int(rng.integers(2, 6)) if width > 170 else int(rng.integers(2, 4))
    gw = [rng.uniform(6, 14) * (0.7 + 0.3 * width / 250) for _ in range(n_main)]
    span = width * rng.uniform(0.5, 0.75)
    centers = list(np.linspace(-span / 2, span / 2, n_main) + rng.normal(0, width * 0.015, n_main))
    zig_amp = rng.uniform(0, 3) if rng.random() < 0.35 else 0.0
    groove_id = np.zeros(cols, np.int32)
    vv = (np.arange(rows) + 0.5) * RES
    main_mask = np.zeros((rows, cols), np.float32)
    wall = rng.uniform(0.1, 0.35)  # wall slope: bottom narrower than top
    for g, (c, w) in enumerate(zip(centers, gw)):
        off = zig_amp * np.sin(2 * np.pi * vv / pitch)[:, None]
        d = np.abs(us[None, :] - c - off)
        top = w / 2
        bottom = top * (1 - wall)
        prof = np.clip((top - d) / max(top - bottom, 0.3), 0, 1)
        main_mask = np.maximum(main_mask, prof)
        groove_id[np.abs(us - c) < top] = g + 1
    h = np.minimum(h, -orig * main_mask)

    # Ribs between main grooves and shoulders: lateral grooves and sipes.
    edges = [-width / 2] + [c for c in centers] + [width / 2]
    lat_depth_frac = rng.uniform(0.55, 1.0)
    sipe_depth = orig * rng.uniform(0.3, 0.8)
    sipe_w = rng.uniform(0.5, 1.0) / RES
    direction = rng.choice([-1.0, 1.0])
    v_shape = rng.random() < 0.4
    for r in range(len(edges) - 1):
        a, b = edges[r] + (gw[r - 1] / 2 if r > 0 else 0), edges[r + 1] - (gw[r] / 2 if r < n_main else 0)
        if b - a < 8:
            continue
        shoulder_rib = r == 0 or r == len(edges) - 2
        ang = rng.uniform(-0.6, 0.6) if not v_shape else direction * (0.5 if (a + b) / 2 < 0 else -0.5)
        if shoulder_rib or rng.random() < 0.6:
            lw = rng.uniform(2, 8) / RES
            depth = orig * (1.0 if shoulder_rib else lat_depth_frac)
            ext_a = a - (shoulder + 5 if r == 0 else 0)
            ext_b = b + (shoulder + 5 if r == len(edges) - 2 else 0)
            n_lat = n_pitch * (1 if rng.random() < 0.7 else 2)
            phase = rng.uniform(0, tile_len)
            for k in range(n_lat):
                v0 = (phase + k * tile_len / n_lat) % tile_len
                pts = []
                for uu in np.linspace(ext_a, ext_b, 6):
                    pts.append(((uu - u0) / RES, (v0 + (uu - a) * ang) / RES))
                for dv in (-rows, 0, rows):
                    m = _draw_line_mask((rows, cols), [(x, y + dv) for x, y in pts], lw)
                    h = np.minimum(h, -depth * m)
        n_sipes = int(rng.integers(0, 4))
        for k in range(n_sipes * n_pitch):
            v0 = (k + rng.uniform(0.2, 0.8)) * tile_len / max(1, n_sipes * n_pitch)
            pts = [((uu - u0) / RES, (v0 + (uu - a) * ang + (1.0 * np.sin(uu)) * (rng.random() < 0.5)) / RES)
                   for uu in np.linspace(a + 2, b - 2, 8)]
            for dv in (-rows, 0, rows):
                m = _draw_line_mask((rows, cols), [(x, y + dv) for x, y in pts], sipe_w)
                h = np.minimum(h, -sipe_depth * m)

    # Shoulder rounds off toward the sidewall.
    over = np.clip(np.abs(us) - width / 2, 0, None)
    rs = rng.uniform(15, 40)
    drop = over ** 2 / (2 * rs)
    h = h - drop[None, :]

    # Wear profile across the width (centre, shoulders, one side, even).
    x = us / (width / 2)
    kind = rng.choice(["even", "centre", "shoulders", "side"], p=[0.4, 0.2, 0.2, 0.2])
    amp = rng.uniform(0.3, 2.5) if kind != "even" else rng.uniform(0, 0.4)
    shape = {"even": np.zeros_like(x), "centre": 1 - np.clip(x, -1, 1) ** 2,
             "shoulders": np.clip(x, -1, 1) ** 2, "side": (np.clip(x, -1, 1) * rng.choice([-1, 1]) + 1) / 2}[kind]
    shape = shape + 0.05 * _noise(rng, (1, cols), [(40, 1.0)])[0]
    groove_shape = np.array([np.interp(c, us, shape) for c in centers])
    # depth_g = orig - (base + amp*shape_g); shallowest groove == min_depth
    base = orig - min_depth - amp * groove_shape.max()
    if base < 0:
        amp = max(0.0, (orig - min_depth) / max(groove_shape.max(), 1e-3))
        base = orig - min_depth - amp * groove_shape.max()
    wear_u = (base + amp * shape).astype(np.float32)
    wear_u = np.clip(wear_u, 0, orig - 0.2)
    groove_depths = [float(orig - np.interp(c, us, wear_u)) for c in centers]

    # Rounded edges: more wear, rounder edges; always a little.
    h = cv2.GaussianBlur(h, (0, 0), rng.uniform(0.25, 0.8) / RES, borderType=cv2.BORDER_WRAP if False else cv2.BORDER_REFLECT)

    # Albedo: black rubber, micro-texture, dirt and dust in grooves.
    base_col = rng.uniform(0.025, 0.11) * np.array([1.0, rng.uniform(0.96, 1.04), rng.uniform(0.94, 1.08)])
    tex = _noise(rng, (rows, cols), [(1.5, rng.uniform(0.03, 0.15)), (6, rng.uniform(0.02, 0.1)), (30, rng.uniform(0.0, 0.08))])
    alb = base_col[None, None, :] * np.exp(tex)[..., None]
    dirt = rng.uniform(0, 1) ** 2
    if dirt > 0.05:
        dcol = rng.choice([np.array([0.25, 0.2, 0.14]), np.array([0.3, 0.3, 0.28]), np.array([0.18, 0.14, 0.1])]) * rng.uniform(0.5, 1.2)
        dn = _noise(rng, (rows, cols), [(6, 1.0), (20, 1.0)])
        depth_below = -np.minimum(h, -wear_u[None, :]) - wear_u[None, :]
        dmask = np.clip((depth_below / orig) * 2 * dirt + 0.6 * dn * dirt - 0.3, 0, 1) ** 1.5
        surface_dust = np.clip(dn * 0.3 * dirt, 0, 0.3)
        dm = np.maximum(dmask, surface_dust)[..., None]
        alb = alb * (1 - dm) + dcol[None, None, :] * dm
    # Stones stuck in grooves.
    for _ in range(int(rng.poisson(1.5))):
        g = int(rng.integers(0, n_main))
        cu = (centers[g] - u0) / RES
        cvv = rng.uniform(0, rows)
        rr = rng.uniform(1.5, 4) / RES
        yy, xx = np.mgrid[0:rows, 0:cols]
        blob = np.clip(1 - ((xx - cu) ** 2 + (yy - cvv) ** 2) / rr ** 2, 0, 1)
        sh = -orig + blob * rng.uniform(1, orig * 0.8) * 2
        h = np.where(blob > 0, np.maximum(h, np.minimum(sh, 0)), h)
        alb = np.where(blob[..., None] > 0, rng.uniform(0.15, 0.45) * np.array([1, 0.95, 0.85]), alb)

    n_twi = 6 if rng.random() < 0.8 else int(rng.integers(4, 9))
    twi_angles = (rng.uniform(0, 2 * np.pi) + np.arange(n_twi) * 2 * np.pi / n_twi) % (2 * np.pi)
    return Tire(radius, width, shoulder, orig, h.astype(np.float32), groove_id, centers, alb.astype(np.float32),
                wear_u, twi_angles, rng.uniform(10, 14), u0, tile_len, groove_depths)


class HeightSampler:
    """Height of the worn tread at (u, v) mm, vectorised over pixels."""

    def __init__(self, tire: Tire):
        self.t = tire
        self.rows, self.cols = tire.tile_h.shape
        self.circ = 2 * np.pi * tire.radius

    def _uv_to_px(self, u, v):
        t = self.t
        mx = ((u - t.u0) / RES - 0.5).astype(np.float32)
        my = ((np.mod(v, t.pitch_len)) / RES - 0.5).astype(np.float32)
        return mx, my

    def tile(self, img, u, v, interp=cv2.INTER_LINEAR):
        mx, my = self._uv_to_px(u, v)
        shape = mx.shape
        n = mx.size
        pad = (-n) % 512
        mx = np.pad(mx.ravel(), (0, pad)).reshape(-1, 512)
        my = np.pad(my.ravel(), (0, pad)).reshape(-1, 512)
        out = cv2.remap(img, mx, my, interp, borderMode=cv2.BORDER_WRAP)
        return out.ravel()[:n].reshape(shape)

    def twi_mask(self, u, v, col):
        t = self.t
        spacing = 2 * np.pi / len(t.twi_angles)
        ang = v / t.radius - t.twi_angles[0]
        d = np.abs(np.mod(ang + spacing / 2, spacing) - spacing / 2) * t.radius
        return (d < t.twi_len / 2) & (t.groove_id[col] > 0)

    def height(self, u, v):
        t = self.t
        h = self.tile(t.tile_h, u, v)
        col = np.clip(((u - t.u0) / RES).astype(np.int32), 0, self.cols - 1)
        wear = t.wear_u[col]
        inside = np.abs(u) <= t.width / 2 + t.shoulder
        tw = self.twi_mask(u, v, col)
        h = np.where(tw, np.maximum(h, -t.orig_depth + TWI_HEIGHT_MM), h)
        h = np.minimum(h, -wear)
        return np.where(inside, h, -60.0).astype(np.float32), wear, tw


def _look_at(pos, target, roll, rng):
    fwd = target - pos
    fwd /= np.linalg.norm(fwd)
    up0 = np.array([0.0, 1.0, 0.0])
    right = np.cross(fwd, up0)
    if np.linalg.norm(right) < 1e-3:
        right = np.array([1.0, 0, 0])
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    c, s = math.cos(roll), math.sin(roll)
    return fwd, c * right + s * up, -s * right + c * up


def sample_camera(rng, tire: Tire, floor_y: float | None):
    """Phone pose: head-on, oblique, close-up, partial or whole-wheel views."""
    mode = rng.choice(["closeup", "headon", "oblique", "far"], p=[0.3, 0.3, 0.3, 0.1])
    dist = {"closeup": rng.uniform(120, 300), "headon": rng.uniform(250, 600),
            "oblique": rng.uniform(200, 700), "far": rng.uniform(600, 1400)}[mode]
    ang = {"closeup": 20, "headon": 12, "oblique": 55, "far": 40}[mode]
    theta = rng.uniform(-0.5, 0.9)  # where on the circumference the camera aims
    u_t = rng.uniform(-0.45, 0.45) * tire.width
    tgt = np.array([u_t, tire.radius * math.sin(theta), tire.radius * math.cos(theta)])
    n = np.array([0, math.sin(theta), math.cos(theta)])
    tv = np.array([0, math.cos(theta), -math.sin(theta)])
    yaw = math.radians(rng.uniform(-ang, ang))
    pitch = math.radians(rng.uniform(-ang, ang))
    d = n * math.cos(yaw) * math.cos(pitch) + np.array([1.0, 0, 0]) * math.sin(yaw) + tv * math.sin(pitch) * math.cos(yaw)
    pos = tgt + dist * d / np.linalg.norm(d)
    if floor_y is not None and pos[1] < floor_y + 60:
        pos[1] = floor_y + 60
    aim = tgt + rng.normal(0, 0.12 * dist, 3)
    roll = rng.normal(0, 0.15) if rng.random() < 0.85 else rng.uniform(-np.pi, np.pi)
    hfov = math.radians(rng.uniform(50, 72))
    return pos, aim, roll, hfov, mode


def _ray_cylinder(o, d, radius):
    a = d[..., 1] ** 2 + d[..., 2] ** 2
    b = 2 * (o[1] * d[..., 1] + o[2] * d[..., 2])
    c = o[1] ** 2 + o[2] ** 2 - radius ** 2
    disc = b * b - 4 * a * c
    ok = disc > 0
    sq = np.sqrt(np.where(ok, disc, 0))
    t = (-b - sq) / (2 * np.maximum(a, 1e-9))
    ok &= t > 0
    return np.where(ok, t, np.inf)


@dataclass
class Light:
    kind: str  # point | dir
    vec: np.ndarray  # position or direction toward the light
    power: float
    color: np.ndarray


def sample_lights(rng, cam_pos, fwd, right, up):
    lights = []
    kind = rng.choice(["flash", "overhead", "sun", "flash+overhead", "window"], p=[0.25, 0.25, 0.2, 0.2, 0.1])
    warm = lambda: np.array([1.0, rng.uniform(0.85, 1.0), rng.uniform(0.65, 1.0)])
    cool = lambda: np.array([rng.uniform(0.85, 1.0), rng.uniform(0.9, 1.0), 1.0])
    if "flash" in kind:
        p = cam_pos + right * rng.uniform(-15, 15) + up * rng.uniform(-15, 15)
        lights.append(Light("point", p, rng.uniform(0.8, 1.4), cool()))
    if "overhead" in kind:
        dvec = np.array([rng.uniform(-0.4, 0.4), 1.0, rng.uniform(-0.2, 0.6)])
        lights.append(Light("dir", dvec / np.linalg.norm(dvec), rng.uniform(0.3, 0.9), warm() if rng.random() < 0.5 else cool()))
    if kind == "sun":
        el = math.radians(rng.uniform(10, 75))
        az = rng.uniform(0, 2 * np.pi)
        dvec = np.array([math.cos(el) * math.cos(az), math.sin(el), math.cos(el) * math.sin(az)])
        lights.append(Light("dir", dvec, rng.uniform(1.0, 2.0), warm()))
    if kind == "window":
        dvec = np.array([rng.uniform(-1, 1), rng.uniform(0.0, 0.6), rng.uniform(0.2, 1)])
        lights.append(Light("dir", dvec / np.linalg.norm(dvec), rng.uniform(0.5, 1.0), cool()))
    ambient = rng.uniform(0.03, 0.35) * (0.5 if kind == "flash" else 1.0)
    return lights, ambient, kind


def _background(rng, h, w, photos):
    r = rng.random()
    if photos and r < 0.45:
        img = photos[int(rng.integers(0, len(photos)))]
        y = int(rng.integers(0, max(1, img.shape[0] - 64)))
        x = int(rng.integers(0, max(1, img.shape[1] - 64)))
        crop = img[y:, x:]
        crop = cv2.resize(crop, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
        return (crop ** 2.2) * rng.uniform(0.3, 1.2)
    if r < 0.75:  # car body / wheel arch: a colour, a dark arch, gradients
        col = rng.uniform(0.02, 0.7, 3)
        img = np.ones((h, w, 3), np.float32) * col
        yy, xx = np.mgrid[0:h, 0:w]
        cx, cy, rad = rng.uniform(0, w), rng.uniform(-h, h), rng.uniform(0.4, 1.2) * max(h, w)
        arch = ((xx - cx) ** 2 + (yy - cy) ** 2) < rad ** 2
        img[arch] = rng.uniform(0.005, 0.05)
        return img * (1 + 0.3 * _noise(rng, (h, w), [(20, 1.0)])[..., None])
    n = _noise(rng, (h, w), [(2, 0.3), (10, 0.5), (40, 0.5)])
    col = rng.uniform(0.05, 0.5, 3)
    return np.clip(col * np.exp(n)[..., None], 0, 2)


def render(rng: np.random.Generator, min_depth: float, size=(320, 240), photos=None, with_tire=True):
    """Render one photo. Returns dict(image uint8 HxWx3, cls uint8 HxW, depth f32 HxW, labels)."""
    w_img, h_img = size
    tire = make_tire(rng, min_depth)
    floor_y = -tire.radius if rng.random() < 0.7 else None
    pos, aim, roll, hfov, mode = sample_camera(rng, tire, floor_y)
    fwd, right, up = _look_at(pos, aim, roll, rng)
    f = (w_img / 2) / math.tan(hfov / 2)
    xs = (np.arange(w_img) + 0.5 - w_img / 2) / f
    ys = (np.arange(h_img) + 0.5 - h_img / 2) / f
    X, Y = np.meshgrid(xs, ys)
    d = fwd[None, None, :] + X[..., None] * right[None, None, :] - Y[..., None] * up[None, None, :]
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    R = tire.radius
    half = tire.width / 2 + tire.shoulder

    t_cyl = _ray_cylinder(pos, d, R) if with_tire else np.full((h_img, w_img), np.inf)
    P = pos + t_cyl[..., None] * d
    on_tread = np.isfinite(t_cyl) & (np.abs(P[..., 0]) <= half)
    t_cyl = np.where(on_tread, t_cyl, np.inf)
    # Sidewall disks at x = +-half (visible when the camera is beside the tire).
    t_side = np.full((h_img, w_img), np.inf)
    side_r = np.zeros((h_img, w_img))
    if with_tire and abs(pos[0]) > half:
        sx = half * np.sign(pos[0])
        ts = (sx - pos[0]) / np.where(np.abs(d[..., 0]) > 1e-6, d[..., 0], 1e-6)
        Ps = pos + ts[..., None] * d
        rr = np.sqrt(Ps[..., 1] ** 2 + Ps[..., 2] ** 2)
        ok = (ts > 0) & (rr < R)
        t_side = np.where(ok, ts, np.inf)
        side_r = rr
    t_floor = np.full((h_img, w_img), np.inf)
    if floor_y is not None:
        tf = (floor_y - pos[1]) / np.where(np.abs(d[..., 1]) > 1e-6, d[..., 1], 1e-6)
        t_floor = np.where(tf > 0, tf, np.inf)

    lights, ambient, light_kind = sample_lights(rng, pos, fwd, right, up)
    wet = rng.random() < 0.2
    bg = _background(rng, h_img, w_img, photos)
    color = bg.copy()

    # Floor: concrete / asphalt / tiles.
    fl = np.isfinite(t_floor) & (t_floor < np.minimum(t_cyl, t_side))
    if fl.any():
        Pf = pos + t_floor[..., None] * d
        fcol = rng.uniform(0.08, 0.45) * np.array([1, rng.uniform(0.9, 1.05), rng.uniform(0.85, 1.1)])
        fn = _noise(rng, (h_img, w_img), [(3, 0.3), (15, 0.3)])
        lit = ambient + sum(l.power * (max(l.vec[1], 0) if l.kind == "dir" else 0.5 * 4e5 / max(np.linalg.norm(l.vec - aim) ** 2, 1e4)) for l in lights)
        fimg = fcol * np.exp(fn)[..., None] * lit
        color[fl] = fimg[fl]
    sw = np.isfinite(t_side) & (t_side < np.minimum(t_cyl, t_floor))
    if sw.any():
        rim_r = R * rng.uniform(0.55, 0.72)
        rim = side_r < rim_r
        scol = np.where(rim[..., None], rng.uniform(0.05, 0.4) * np.ones(3), rng.uniform(0.03, 0.09) * np.ones(3))
        lit = ambient + sum(l.power * 0.5 for l in lights)
        color[sw] = (scol * lit)[sw] * (1 + 0.2 * _noise(rng, (h_img, w_img), [(4, 1.0)])[..., None])[sw]

    cls = np.zeros((h_img, w_img), np.uint8)
    depth_map = np.zeros((h_img, w_img), np.float32)
    hit = on_tread & (t_cyl <= np.minimum(t_side, t_floor))
    groove_seen = {}
    if hit.any():
        idx = np.nonzero(hit)
        dd = d[idx]
        Ph = P[idx]
        u = Ph[:, 0].astype(np.float32)
        theta = np.arctan2(Ph[:, 1], Ph[:, 2])
        v = (theta * R).astype(np.float32)
        nrm = np.stack([np.zeros_like(theta), np.sin(theta), np.cos(theta)], -1)
        tvv = np.stack([np.zeros_like(theta), np.cos(theta), -np.sin(theta)], -1)
        view = -dd
        vu, vvv, vn = view[:, 0], (view * tvv).sum(-1), np.maximum((view * nrm).sum(-1), 0.12)
        hs = HeightSampler(tire)
        # Parallax occlusion: march into the height field along the view ray.
        maxd = tire.orig_depth + 1.0
        steps = 10
        prev_delta = np.zeros_like(u)
        found = np.zeros(u.shape, bool)
        uh, vh = u.copy(), v.copy()
        for k in range(1, steps + 1):
            delta = maxd * k / steps
            uu = u - delta * vu / vn
            vq = v - delta * vvv / vn
            hh, _, _ = hs.height(uu[None], vq[None])
            hh = hh[0]
            new = (~found) & (-hh <= delta)
            # refine: linear step back
            uh = np.where(new, uu, uh)
            vh = np.where(new, vq, vh)
            found |= new
        uh = np.where(found, uh, u - maxd * vu / vn)
        vh = np.where(found, vh, v - maxd * vvv / vn)
        hh, wear, tw = hs.height(uh[None], vh[None])
        hh, wear, tw = hh[0], wear[0], tw[0]
        e = 0.5
        hx = (hs.height((uh + e)[None], vh[None])[0][0] - hs.height((uh - e)[None], vh[None])[0][0]) / (2 * e)
        hy = (hs.height(uh[None], (vh + e)[None])[0][0] - hs.height(uh[None], (vh - e)[None])[0][0]) / (2 * e)
        hx = np.clip(hx, -8, 8)
        hy = np.clip(hy, -8, 8)
        nt = np.stack([-hx, -hy, np.ones_like(hx)], -1)
        nt /= np.linalg.norm(nt, axis=-1, keepdims=True)
        nw = nt[:, :1] * np.array([1.0, 0, 0]) + nt[:, 1:2] * tvv + nt[:, 2:3] * nrm
        Pw = np.stack([uh, (R + hh) * np.sin(vh / R), (R + hh) * np.cos(vh / R)], -1)
        # Cavity / ambient occlusion from the worn height field, precomputed on the tile.
        cols = hs.cols
        wear_tile = np.minimum(tire.tile_h, -tire.wear_u[None, :])
        blur = cv2.GaussianBlur(wear_tile, (0, 0), 3.0 / RES, borderType=cv2.BORDER_WRAP if hasattr(cv2, "BORDER_WRAP") and False else cv2.BORDER_REFLECT)
        ao_tile = np.exp(-np.clip(blur - wear_tile, 0, None) * rng.uniform(0.2, 0.5)).astype(np.float32)
        ao = hs.tile(ao_tile, uh[None], vh[None])[0]
        alb = np.stack([hs.tile(np.ascontiguousarray(tire.albedo[..., c]), uh[None], vh[None])[0] for c in range(3)], -1)
        alb = np.where(tw[:, None], alb * rng.uniform(0.9, 1.3), alb)
        if wet:
            alb = alb * 0.7
        rough_exp = rng.uniform(8, 30) if not wet else rng.uniform(60, 200)
        ks = rng.uniform(0.01, 0.06) if not wet else rng.uniform(0.2, 0.7)
        shade = alb * ambient * ao[:, None]
        ao_direct = rng.uniform(0.3, 0.8)
        for l in lights:
            if l.kind == "point":
                Lw = l.vec - Pw
                dist2 = (Lw ** 2).sum(-1)
                Lw = Lw / np.sqrt(dist2)[:, None]
                inten = l.power * (4e5 / np.maximum(dist2, 1e3))
                inten = np.minimum(inten, 6.0)
            else:
                Lw = np.broadcast_to(l.vec, Pw.shape)
                inten = np.full(len(Pw), l.power)
            Lt_u = Lw[:, 0]
            Lt_v = (Lw * tvv).sum(-1)
            Lt_n = (Lw * nrm).sum(-1)
            lit = np.ones_like(Lt_n)
            ln = np.maximum(Lt_n, 0.05)
            for k in range(1, 7):
                dl = (tire.orig_depth + 0.5) * k / 6
                hq = hs.height((uh + dl * Lt_u / ln)[None], (vh + dl * Lt_v / ln)[None])[0][0]
                lit = np.minimum(lit, np.clip(1 - (hq - (hh + dl)) / 0.6, 0, 1))
            lit = np.where(Lt_n > 0, lit, 0)
            ndl = np.clip((nw * Lw).sum(-1), 0, 1)
            hv = Lw + view
            hv /= np.linalg.norm(hv, axis=-1, keepdims=True)
            spec = ks * np.clip((nw * hv).sum(-1), 0, 1) ** rough_exp * (rough_exp + 2) / 8
            shade += (alb * ndl[:, None] + spec[:, None]) * (inten * lit * (ao_direct + (1 - ao_direct) * ao))[:, None] * l.color[None, :]
        color[idx] = shade
        # Ground truth per pixel.
        col = np.clip(((uh - tire.u0) / RES).astype(np.int32), 0, cols - 1)
        gid = tire.groove_id[col]
        in_tread = np.abs(uh) <= tire.width / 2
        c = np.where(in_tread, BG_TREAD, BG_NONE)
        c = np.where(gid > 0, BG_GROOVE, c)
        c = np.where(tw & (gid > 0), BG_TWI, c)
        cls[idx] = c
        local = np.clip(tire.orig_depth - wear, 0, None)
        depth_map[idx] = np.where(c > 0, local, 0)
        for g in range(len(tire.groove_centers)):
            groove_seen[g] = int(((gid == g + 1) & (c >= BG_GROOVE)).sum())

    # Camera pipeline.
    lum = color.mean(-1)
    target = rng.uniform(0.12, 0.4)
    ref = np.percentile(lum, rng.uniform(50, 85))
    img = color * (target / max(ref, 1e-4))
    img *= np.array([rng.uniform(0.8, 1.2), 1.0, rng.uniform(0.8, 1.2)])[None, None, :]
    yy, xx = np.mgrid[0:h_img, 0:w_img]
    vig = 1 - rng.uniform(0, 0.35) * (((xx - w_img / 2) ** 2 + (yy - h_img / 2) ** 2) / ((w_img / 2) ** 2 + (h_img / 2) ** 2))
    img *= vig[..., None]
    blur_kind = rng.random()
    if blur_kind < 0.35:
        img = cv2.GaussianBlur(img.astype(np.float32), (0, 0), rng.uniform(0.3, 1.6))
    elif blur_kind < 0.5:
        k = int(rng.integers(3, 9))
        ker = np.zeros((k, k), np.float32)
        ker[k // 2, :] = 1.0 / k
        M = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1.0)
        ker = cv2.warpAffine(ker, M, (k, k))
        ker /= max(ker.sum(), 1e-6)
        img = cv2.filter2D(img.astype(np.float32), -1, ker)
    img = np.clip(img, 0, None)
    noise_lvl = rng.uniform(0.002, 0.03)
    img = img + rng.standard_normal(img.shape).astype(np.float32) * np.sqrt(img * noise_lvl * 0.05 + noise_lvl ** 2)
    img = np.clip(img, 0, 1) ** (1 / 2.2)
    img = np.clip(img * 255 + 0.5, 0, 255).astype(np.uint8)
    q = int(rng.integers(35, 96))
    ok, enc = cv2.imencode(".jpg", img[..., ::-1], [cv2.IMWRITE_JPEG_QUALITY, q])
    img = cv2.imdecode(enc, cv2.IMREAD_COLOR)[..., ::-1].copy()

    visible = [g for g, n in groove_seen.items() if n >= 12]
    depths = [tire.groove_depths[g] for g in visible]
    tread_frac = float((cls > 0).mean())
    labels = {
        "is_tire": bool(with_tire and tread_frac >= 0.03),
        "tread_frac": tread_frac,
        "min_depth": float(min(depths)) if depths else float("nan"),
        "mean_depth": float(np.mean(depths)) if depths else float("nan"),
        "groove_depths": [float(x) for x in tire.groove_depths],
        "visible_grooves": visible,
        "orig_depth": float(tire.orig_depth),
        "mode": str(mode), "light": str(light_kind), "wet": bool(wet),
    }
    return {"image": img, "cls": cls, "depth": depth_map, "labels": labels}
