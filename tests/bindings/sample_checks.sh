# sample_checks.sh — sourced by go.sh and java.sh: what both check of a binding's sample run
# with the stop-condition options.  fail MESSAGE ends the test.
fail() { echo "FAIL: $*"; exit 1; }

# read_plain_run OUTPUT STEP_RE: the sample's plain run on a model without a tokenizer (one line
# per step matching STEP_RE, then "end: ..."), checked, into plain_steps, plain_ids (one id a
# line) and plain_count.  It must end by the sample's cap of 32 steps or by an end-of-generation
# id, hold nothing else, and have enough steps for the checks that follow.
read_plain_run() {
  local plain=$1 step_re=$2 plain_end
  plain_steps=$(grep -E "$step_re" <<<"$plain" || true)
  plain_ids=$(awk '{print $1}' <<<"$plain_steps")
  plain_count=$(grep -c . <<<"$plain_steps" || true)
  plain_end=$(tail -n 1 <<<"$plain")
  case $plain_end in
    "end: limit") [ "$plain_count" -eq 32 ] || fail "plain run: $plain_count steps before 'end: limit', not 32" ;;
    "end: end of generation") ;;
    *) fail "plain run ends with '$plain_end'" ;;
  esac
  [ "$(grep -c . <<<"$plain")" -eq $((plain_count + 1)) ] || fail "plain run: lines besides the steps and the end line"
  [ "$plain_count" -ge 6 ] || fail "plain run: only $plain_count steps, too few for the checks below"
}
