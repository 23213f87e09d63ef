"""The README's Python examples run as written, in order (the later blocks use the names of the
first), and print what their comments say."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2, "README.md should open with the dtype-free example, then the migration path"
    assert "quint8" not in blocks[0] and "qint8" not in blocks[0], "the first example is dtype-free"
    scope = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for i, code in enumerate(blocks):
            exec(compile(code, f"README.md python block {i}", "exec"), scope)  # noqa: S102
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("tensor([") and "dtype=torch.uint8" in lines[0], lines
    assert lines[1] == "0.05 torch.Size([1, 3, 4, 4])", lines
    assert lines[2] == "torch.Size([1, 8, 6, 6])", lines
    qx = scope["qx"]
    assert qx.is_quantized and qx.dtype == scope["torch"].quint8  # the migration block's qx
