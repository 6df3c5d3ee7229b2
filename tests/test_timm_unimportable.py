"""timm imports torchvision, whose operators load only beside the torch build it was made for:
where that import fails with anything but ImportError, the backend is unavailable with the
reason and what to do, and nothing else of gelucheck is disturbed."""
import sys

import pytest

pytest.importorskip("torch", reason="torch is not installed (extra: torch)")


class _BrokenTorchvision:
    """An import hook that fails timm's import as a mismatched torchvision does."""

    def find_spec(self, name, path=None, target=None):
        if name == "timm" or name.startswith("timm."):
            raise RuntimeError("operator torchvision::nms does not exist")
        return None


def test_a_timm_that_does_not_import_leaves_the_backend_unavailable_with_the_reason(
        monkeypatch):
    from gelucheck.backends import timm_backend

    for name in [n for n in sys.modules if n == "timm" or n.startswith("timm.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_BrokenTorchvision(), *sys.meta_path])
    backend = timm_backend.load()
    assert not backend.available
    assert "operator torchvision::nms does not exist" in backend.reason
    assert "torchvision must be the build made for the installed torch" in backend.reason
