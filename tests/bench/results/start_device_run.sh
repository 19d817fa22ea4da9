# start_device_run.sh — sourced first by a session's device run script (h100_sNN_runM.sh), on the
# GPU machine from the repository root: everything the script prints goes to $OUT/run.log too,
# the log names the commit (COMMIT, carried) and the GPU, and the carried build-bundle.tar.xz
# (scripts/make_device_bundle.sh) is unpacked with its libraries on the loader path.
# Scripts from before session 28 carry these lines themselves.
exec > >(tee "$OUT/run.log") 2>&1
set -u
SECONDS=0
echo "commit $(cat COMMIT)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
