# shellcheck shell=bash
# sample_checks.sh — sourced by go.sh and java.sh: what both check of a binding's sample run
# with the stop-condition options.  fail MESSAGE ends the test.
fail() { echo "FAIL: $*"; exit 1; }

# read_plain_run OUTPUT STEP_RE STEP_KEY: the sample's plain run on a model without a tokenizer
# (one line per step matching STEP_RE, then "end: ..."), checked, into plain_steps (each step
# line as STEP_KEY, an awk program, keeps of it: what two runs must share), plain_ids (one id a
# line) and plain_count.  It must end by the sample's cap of 32 steps or by an end-of-generation
# id, hold nothing else, and have enough steps for the checks that follow.
read_plain_run() {
  local plain=$1 plain_end
  step_re=$2 step_key=$3
  plain_steps=$(steps_of "$plain")
  plain_ids=$(grep -E "$step_re" <<<"$plain" | awk '{print $1}' || true)
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

# steps_of OUTPUT: its step lines, as STEP_KEY keeps them.
steps_of() { grep -E "$step_re" <<<"$1" | awk "$step_key" || true; }

# check_max_tokens OUTPUT: a run with -max-tokens 5 prints the plain run's first 5 steps, then
# "end: length", and nothing else.
check_max_tokens() {
  local out=$1
  [ "$(grep -cE "$step_re" <<<"$out")" -eq 5 ] || fail "-max-tokens 5 printed $(grep -cE "$step_re" <<<"$out") steps"
  [ "$(steps_of "$out")" = "$(head -n 5 <<<"$plain_steps")" ] || fail "-max-tokens 5: other steps"
  [ "$(tail -n 1 <<<"$out")" = "end: length" ] || fail "-max-tokens 5 ends with '$(tail -n 1 <<<"$out")'"
  [ "$(grep -c . <<<"$out")" -eq 6 ] || fail "-max-tokens 5: $(grep -c . <<<"$out") lines, not 6"
}

# check_stop_id OUTPUT ID: a run with -stop-id ID (ID the plain run's 3rd token) ends where ID
# first comes in the plain run (step 3 or before), with "end: stop (id ID)".
check_stop_id() {
  local out=$1 id=$2 k
  k=$(grep -nxm1 -- "$id" <<<"$plain_ids" | cut -d: -f1)
  [ "$(steps_of "$out")" = "$(head -n "$k" <<<"$plain_steps")" ] || fail "-stop-id $id did not end at step $k: $out"
  [ "$(tail -n 1 <<<"$out")" = "end: stop (id $id)" ] || fail "-stop-id $id ends with '$(tail -n 1 <<<"$out")'"
}
