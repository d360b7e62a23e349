"""The two networks.

TreadNet: MobileNetV2 (alpha 1.0, Keras layer layout so the nsfwjs ImageNet-
derived weights load by name) with three heads: tire gate logit, depth
(mean and log-sigma of the shallowest visible main groove, mm) and wear
class logits (new, good, medium, worn, critical).

SegNet: a small U-Net trained from scratch on different targets: per-pixel
tread / main groove / TWI classes and a dense local groove-depth map at
half resolution. Its depth is the second, independent estimate; its masks
drive the TWI detector and the overlays.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

# (expansion t, channels c, repeats n, stride s), Keras block order
MBV2_CFG = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def conv_bn(cin, cout, k, s, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout, eps=1e-3, momentum=0.1)]
    if act:
        layers.append(nn.ReLU6(inplace=True))
    return nn.Sequential(*layers)


class InvRes(nn.Module):
    def __init__(self, cin, cout, stride, t, name):
        super().__init__()
        self.name = name
        hid = cin * t
        self.expand = conv_bn(cin, hid, 1, 1) if t != 1 else None
        self.dw = conv_bn(hid, hid, 3, stride, groups=hid)
        self.project = conv_bn(hid, cout, 1, 1, act=False)
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.expand(x) if self.expand is not None else x
        y = self.project(self.dw(y))
        return x + y if self.res else y


class MobileNetV2(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 32, 3, 2)
        blocks, cin, i = [], 32, 0
        for t, c, n, s in MBV2_CFG:
            for r in range(n):
                name = "expanded_conv" if i == 0 else f"block_{i}"
                blocks.append(InvRes(cin, c, s if r == 0 else 1, t, name))
                cin, i = c, i + 1
        self.blocks = nn.ModuleList(blocks)
        self.head = conv_bn(320, 1280, 1, 1)

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = b(x)
        return self.head(x)


FROZEN_BLOCKS = 6  # stem + blocks 0..5 (to 32 ch at 1/8) stay as pretrained
TOP_BLOCKS = 13  # blocks 6..12 (64 and 96 ch at 1/16) are fine-tuned


class TreadNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = MobileNetV2()
        self.fc = nn.Linear(96 * 2, 128)
        self.drop = nn.Dropout(0.2)
        self.out = nn.Linear(128, 1 + 2 + 5)
        # Training-only auxiliary head on the 1/16 feature map: per-cell tire share,
        # main-groove share and local groove depth (dense supervision for the trunk;
        # not exported, not used at inference).
        self.aux = nn.Conv2d(96, 3, 1)

    def early(self, x):
        # The shared input is normalised to -1..1; the nsfwjs MobileNetV2 was trained on 0..1.
        x = self.backbone.stem(x * 0.5 + 0.5)
        for b in self.backbone.blocks[:FROZEN_BLOCKS]:
            x = b(x)
        return x

    def features(self, f):
        for b in self.backbone.blocks[FROZEN_BLOCKS:TOP_BLOCKS]:
            f = b(f)
        return f

    def heads(self, f):
        pooled = torch.cat([f.mean((2, 3)), f.amax((2, 3))], 1)
        o = self.out(self.drop(F.relu(self.fc(pooled))))
        return o[:, 0], F.softplus(o[:, 1]), o[:, 2].clamp(-3, 2), o[:, 3:]

    def top(self, f):
        return self.heads(self.features(f))

    def forward(self, x):
        return self.top(self.early(x))


class TreadEnsemble(nn.Module):
    """Several TreadNets that share the frozen pretrained trunk (stem and blocks 0..5 are the
    same weights in every checkpoint): the trunk runs once, each member's top runs on it, and
    the readings are averaged. Depth sigma combines the members' own variance with their
    disagreement, so the interval widens where they differ."""

    def __init__(self, nets: list[TreadNet]):
        super().__init__()
        first = nets[0].state_dict()
        trunk = [k for k in first if k.startswith("backbone.stem") or any(
            k.startswith(f"backbone.blocks.{i}.") for i in range(FROZEN_BLOCKS))]
        for other in nets[1:]:
            theirs = other.state_dict()
            for k in trunk:
                assert torch.equal(first[k], theirs[k]), f"members differ in the frozen trunk: {k}"
        self.members = nn.ModuleList(nets)

    def early(self, x):
        return self.members[0].early(x)

    def top(self, f):
        outs = [m.top(f) for m in self.members]
        g = torch.stack([o[0] for o in outs]).mean(0)
        d_all = torch.stack([o[1] for o in outs])
        d = d_all.mean(0)
        var = torch.stack([torch.exp(2 * o[2]) for o in outs]).mean(0) + d_all.var(0, unbiased=False)
        w = torch.stack([o[3] for o in outs]).mean(0)
        return g, d, 0.5 * torch.log(var), w

    def forward(self, x):
        return self.top(self.early(x))


class TreadNetExport(nn.Module):
    """ONNX wrapper: gate probability, depth mm, sigma mm, wear logits.

    tta "photo": the photo and its mirror image go through the network as one batch and the two
    readings are averaged (a tread seen in a mirror has the same depth). tta "features": the
    frozen trunk runs once and its feature map and their mirror image go through the trained top
    (the flip the members were trained with, on cached features), for a fraction of the cost."""

    def __init__(self, net: nn.Module, tta: str = "none"):
        super().__init__()
        assert tta in ("none", "photo", "features"), tta
        self.net = net
        self.tta = tta

    def forward(self, x):
        if self.tta == "none":
            g, d, ls, w = self.net(x)
            return torch.sigmoid(g), d, torch.exp(ls), w
        n = x.shape[0]
        if self.tta == "photo":
            g, d, ls, w = self.net(torch.cat([x, torch.flip(x, dims=[3])], 0))
        else:
            f = self.net.early(x)
            g, d, ls, w = self.net.top(torch.cat([f, torch.flip(f, dims=[3])], 0))
        mean = lambda t: (t[:n] + t[n:]) * 0.5
        return mean(torch.sigmoid(g)), mean(d), torch.sqrt(mean(torch.exp(2 * ls))), mean(w)


def cbr(cin, cout, s=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, s, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def pw(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def dw(c):
    return nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, groups=c, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True))


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.e1 = cbr(3, 12, 2)  # 80
        self.e2 = nn.Sequential(cbr(12, 24, 2), cbr(24, 24))  # 40
        self.e3 = nn.Sequential(cbr(24, 48, 2), cbr(48, 48))  # 20
        self.e4 = nn.Sequential(cbr(48, 64, 2), cbr(64, 64), cbr(64, 64))  # 10
        self.d3 = nn.Sequential(pw(64 + 48, 48), dw(48))
        self.d2 = nn.Sequential(pw(48 + 24, 24), dw(24))
        self.d1 = nn.Sequential(pw(24 + 12, 16), dw(16))
        self.cls = nn.Conv2d(16, 4, 1)
        self.depth = nn.Conv2d(16, 1, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(e1)
        e3 = self.e3(e2)
        e4 = self.e4(e3)
        up = lambda a, b: F.interpolate(a, size=b.shape[-2:], mode="bilinear", align_corners=False)
        d3 = self.d3(torch.cat([up(e4, e3), e3], 1))
        d2 = self.d2(torch.cat([up(d3, e2), e2], 1))
        d1 = self.d1(torch.cat([up(d2, e1), e1], 1))
        return self.cls(d1), F.softplus(self.depth(d1))[:, 0]


class SegNetExport(nn.Module):
    """ONNX wrapper: class probabilities N x 4 x 80 x 80 and depth N x 80 x 80 (mm).

    With tta, the mirrored photo's maps are mirrored back and averaged with the direct ones."""

    def __init__(self, net: SegNet, tta: bool = False):
        super().__init__()
        self.net = net
        self.tta = tta

    def forward(self, x):
        if not self.tta:
            c, d = self.net(x)
            return torch.softmax(c, 1), d
        n = x.shape[0]
        c, d = self.net(torch.cat([x, torch.flip(x, dims=[3])], 0))
        p = torch.softmax(c, 1)
        return (p[:n] + torch.flip(p[n:], dims=[3])) * 0.5, (d[:n] + torch.flip(d[n:], dims=[2])) * 0.5


class TwiNet(nn.Module):
    """The TWI detector of the 2026-11-24 experiment (twi_dataset.py / train_twi.py; not shipped,
    models/NOTEBOOK.md "A TWI detector on the tread crop"): a small encoder-decoder trained from
    scratch on the tread crop at 256 x 256, two logits per cell of a 64 x 64 grid: a TWI bar, and a
    main groove (bars included; the geometry the bars are checked against). Strides 2, 4, 8, 16;
    back up to 4."""

    def __init__(self):
        super().__init__()
        self.e1 = cbr(3, 16, 2)  # 128
        self.e2 = nn.Sequential(cbr(16, 24, 2), cbr(24, 24))  # 64
        self.e3 = nn.Sequential(cbr(24, 48, 2), cbr(48, 48))  # 32
        self.e4 = nn.Sequential(cbr(48, 64, 2), cbr(64, 64))  # 16
        self.d3 = nn.Sequential(pw(64 + 48, 48), dw(48))
        self.d2 = nn.Sequential(pw(48 + 24, 32), dw(32), dw(32))
        self.out = nn.Conv2d(32, 2, 1)

    def forward(self, x):
        e2 = self.e2(self.e1(x))
        e3 = self.e3(e2)
        e4 = self.e4(e3)
        up = lambda a, b: F.interpolate(a, size=b.shape[-2:], mode="bilinear", align_corners=False)
        d3 = self.d3(torch.cat([up(e4, e3), e3], 1))
        d2 = self.d2(torch.cat([up(d3, e2), e2], 1))
        return self.out(d2)


class TwiNetExport(nn.Module):
    """ONNX wrapper: probabilities N x 2 x 64 x 64 (TWI bar, main groove), averaged over the crop and
    its mirror image (mirrored back)."""

    def __init__(self, net: TwiNet):
        super().__init__()
        self.net = net

    def forward(self, x):
        n = x.shape[0]
        p = torch.sigmoid(self.net(torch.cat([x, torch.flip(x, dims=[3])], 0)))
        return (p[:n] + torch.flip(p[n:], dims=[3])) * 0.5


def load_checkpoint(net: nn.Module, path: str) -> nn.Module:
    """A train.py checkpoint into `net`. Every weight must be there but the training-only auxiliary
    head's (checkpoints from before it lack it; a graph unfolded by unfold_onnx.py never has it)."""
    missing, unexpected = net.load_state_dict(torch.load(path), strict=False)
    assert not unexpected and all(k.startswith("aux.") for k in missing), (missing, unexpected)
    return net
