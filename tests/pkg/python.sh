#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Python package as a researcher installs it (KTAP): "pip install ./python"
# into a venv (offline: --no-build-isolation --no-index, the venv seeing the
# system's setuptools and numpy), imported from the venv, its metadata
# (version, numpy declared), the launcher running the venv's interpreter, and
# inagg.Timeout a builtin TimeoutError.
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "$BUILD")
tmp=$(mktemp -d /tmp/ia-py-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$here/tests/ktap.sh"

v=$tmp/v
py() { (cd "$tmp" && env -u PYTHONPATH INAGG_LIB="$build/libinagg.so" "$v/bin/python" "$@"); }

venv() { /usr/bin/python3 -m venv --system-site-packages "$v"; }

# From a copy: setuptools builds in the folder it is given (build/, inagg.egg-info).
pip_install() {
	mkdir "$tmp/src" && cp -r "$here/python" "$tmp/src/" &&
	find "$tmp/src" -name __pycache__ -prune -exec rm -rf {} + &&
	(cd "$tmp/src" && "$v/bin/pip" install -q --no-build-isolation --no-index ./python)
}

imports_from_venv() {
	local out
	out=$(py -c 'import inagg, inagg._lib; inagg._lib.lib(); print(inagg.__file__)') || return 1
	echo "$out"
	[[ $out == "$v"/lib/python3*/site-packages/inagg/__init__.py ]]
}

metadata() {
	local version show
	version=$("$build/inagg" --version | awk '{ print $2 }')
	show=$("$v/bin/pip" show inagg) || return 1
	echo "$show" | grep -E '^(Version|Requires):'
	grep -qx "Version: $version" <<<"$show" && grep -qE '^Requires:.*\bnumpy\b' <<<"$show" &&
	[ "$(py -c 'import inagg; print(inagg.__version__)')" = "$version" ]
}

launcher_interpreter() {
	[ "$(py -c 'import inagg.launch as l, sys; print(l.PY == sys.executable, l.PY)')" = \
		"True $v/bin/python" ]
}

timeout_is_builtin() {
	py -c '
import errno, inagg
e = inagg.Timeout(errno.ETIMEDOUT, "chunk 3: no result")
assert isinstance(e, TimeoutError) and isinstance(e, inagg.InaggError), type(e).__mro__
assert e.errno == errno.ETIMEDOUT and str(e) == "chunk 3: no result (ETIMEDOUT)", str(e)
try:
    raise e
except TimeoutError:
    pass
'
}

# The DDP hook on a bucket of each floating type (a reduce that doubles, as two workers'
# sum): numpy sees float32, the mean comes back exact in the bucket's type (bf16 has no numpy);
# a float32 bucket takes the in-place path (reduce_into, on the hook's thread: here inline).
hook_dtypes() {
	py -c '
import numpy as np, torch, inagg.ddp as d
class State:
    n, verify_group, step = 2, None, 0
    def reduce(self, g, idx):
        assert g.dtype == np.float32, g.dtype
        return g.astype(np.float64) * 2, 20, 0
    def reduce_into(self, v, idx, mean=False):
        assert v.dtype == np.float32, v.dtype
        v *= 2 / self.n if mean else 2
        return 20, 0
    def submit(self, fn):
        fn()
class Bucket:
    def __init__(self, t): self.t = t
    def buffer(self): return self.t
    def index(self): return 0
    def is_last(self): return True
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    t = torch.tensor([1.5, -2.25, 3.0], dtype=dt)
    assert d.allreduce_hook(State(), Bucket(t)).wait() is t
    assert t.dtype == dt and t.tolist() == [1.5, -2.25, 3.0], (dt, t)
    print(dt, "ok")
'
}

if ! /usr/bin/python3 -c 'import ensurepip, numpy' 2>/dev/null; then
	t "python: venv and numpy (python3-venv, python3-numpy)" false
	finish
fi
t "python: python3 -m venv --system-site-packages" venv
t "python: pip install --no-build-isolation --no-index ./python" pip_install
t "python: the venv imports its inagg, which loads libinagg" imports_from_venv
t "python: pip metadata: this version, numpy required; inagg.__version__" metadata
t "python: inagg.launch runs the interpreter it was started with" launcher_interpreter
t "python: inagg.Timeout is a TimeoutError and an InaggError" timeout_is_builtin
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	t "python: the DDP hook takes float32, float64, float16 and bfloat16 buckets" hook_dtypes
else
	results+=("ok $((++n)) python: the DDP hook's bucket types # SKIP no python3-torch")
fi
finish
