# Sourced by the fuzz proofs. `each N FN ITEM...` runs `FN ITEM` in the background for every
# item, at most N at once (jobs the caller already started count), then waits for every job.
each() {
  local n="$1" fn="$2" item
  shift 2
  for item in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$n" ]; do wait -n || true; done
    "$fn" "$item" &
  done
  wait
}
