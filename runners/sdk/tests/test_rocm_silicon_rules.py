"""The ROCm silicon backend's precision rules, without a GPU (pure functions).

Untested on AMD silicon here: these pin the rule the silicon path follows (fp8 dtype by
gfx target, XF32 only when hipBLASLt was asked), not PyTorch's behaviour.
"""

from __future__ import annotations

import pytest

from runners.sdk.protocols import NotSupportedError
from runners.sdk.silicon.compute import FP8_MAX, TorchCompute, fp8_format
from runners.sdk.silicon.rocm_compute import XF32_ENV, require_xf32


def test_fp8_on_gfx942_uses_the_fnuz_format() -> None:
    assert fp8_format(hip=True, arch="gfx942:sramecc+:xnack-") == "float8_e4m3fnuz"
    assert FP8_MAX["float8_e4m3fnuz"] == 240.0


@pytest.mark.parametrize(("hip", "arch"), [(False, ""), (True, "gfx950"), (False, "gfx942")])
def test_fp8_elsewhere_uses_the_ocp_format(hip: bool, arch: str) -> None:
    assert fp8_format(hip=hip, arch=arch) == "float8_e4m3fn"


def test_fail_closed_tf32_on_rocm_without_xf32_is_refused_naming_it() -> None:
    with pytest.raises(NotSupportedError, match=XF32_ENV):
        require_xf32({})
    with pytest.raises(NotSupportedError):
        require_xf32({XF32_ENV: "0"})
    require_xf32({XF32_ENV: "1"})


def test_torch_module_is_a_read_only_accessor() -> None:
    prop = TorchCompute.__dict__["torch_module"]
    assert isinstance(prop, property) and prop.fset is None
