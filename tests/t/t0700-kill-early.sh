#!/bin/bash
# exclusive: records -a with every CPU busy and bounds the samples lost against CPUs x time
# SIGKILL of the recorder at 10 random moments 0.2 to 2.1 s after its start
# (most before or around its first flush); see t07-kill.inc for what each
# file must hold.
. "$(dirname "$0")/t07-kill.inc"
test_seed
moments=()
for i in $(seq 0 9); do
	r=$RANDOM # drawn here: a subshell's $RANDOM is reseeded
	moments+=("$(awk -v i="$i" -v r="$r" \
		'BEGIN { printf "%.2f", 0.2 + i * 0.19 + r / 32768 * 0.19 }')")
done
echo "moments: ${moments[*]}"
kill_at "${moments[@]}"
pass
