"""kornia 0.9.0, kornia/feature/loftr/utils/coarse_matching.py:203, 204 (GG001, four
reports: ``sim_matrix.sub_()``, ``conf_matrix.mul_()``, ``col_exp.div_()``).

Judged false. The writes are in the ``else`` arm of ``if sim_matrix.requires_grad:``:
they run only when the similarity matrix is outside any graph. With features that
require grad the other arm runs and backward is clean.
"""

import torch
from judge import judge
from kornia.feature.loftr.utils.coarse_matching import CoarseMatching

CONFIG = {"thr": 0.2, "border_rm": 0, "train_coarse_percent": 0.3, "train_pad_num_gt_min": 2,
          "match_type": "dual_softmax", "dsmax_temperature": 0.1, "sparse_spvs": False}


def data() -> dict:
    return {"hw0_c": (4, 4), "hw1_c": (4, 4), "hw0_i": (32, 32), "hw1_i": (32, 32),
            "bs": 1, "stride_c": 8}


def run(requires_grad: bool) -> None:
    matcher = CoarseMatching(CONFIG).eval()
    feat0 = torch.randn(1, 16, 8, requires_grad=requires_grad)
    feat1 = torch.randn(1, 16, 8, requires_grad=requires_grad)
    found = data()
    matcher(feat0, feat1, found)
    if requires_grad:
        found["conf_matrix"].sum().backward()


judge(with_gradients=lambda: run(True), without_gradients=lambda: run(False))
