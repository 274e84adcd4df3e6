#!/bin/bash
# exclusive: records -a with every CPU busy and bounds the samples lost against CPUs x time
# SIGKILL of the recorder at 10 random moments 2.1 to 3.05 s after its start,
# after several flushes; see t07-kill.inc for what each file must hold.
# At least 8 of these files must hold samples.
. "$(dirname "$0")/t07-kill.inc"
test_seed
moments=()
for i in $(seq 0 9); do
	r=$RANDOM # drawn here: a subshell's $RANDOM is reseeded
	moments+=("$(awk -v i="$i" -v r="$r" \
		'BEGIN { printf "%.2f", 2.1 + i * 0.095 + r / 32768 * 0.095 }')")
done
echo "moments: ${moments[*]}"
kill_at "${moments[@]}"
[ "$KILL_WITH_DATA" -ge 8 ] ||
	die "only $KILL_WITH_DATA of 10 files killed after 2.1 s hold samples"
pass
