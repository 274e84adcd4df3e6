# bash completion for dcprof: its commands, each command's options (as
# `dcprof COMMAND --help` lists them; tests/t/t0830-completion.sh checks
# that), and the values or files an option takes. Installed as
# share/bash-completion/completions/dcprof; needs nothing from the
# bash-completion package.

_dcprof_commands="record report diff cookies export flamegraph annotate top collect"

# The options of command $1, one word each.
_dcprof_options()
{
	case $1 in
	record)
		echo -a --all-cpus -p --pid -t --tid -i --no-inherit -u --uid -C --cpu -F --freq \
			-c --count -e --event -g \
			--call-graph -o --output --duration --kill-at-end \
			--only --flush-interval --mmap-pages --backend --ready-fd \
			--off-cpu --off-cpu-min --unwind-memory --memory-limit \
			--max-open-files -G --cgroup \
			--no-cgroups -v --verbose \
			--continuous --period \
			--keep --keep-size --push --push-app --push-label \
			--push-token-file --push-basic-auth-file --push-ca-file \
			--push-spool-size --push-tenant --push-sample-labels \
			--push-max-samples --push-max-bytes
		;;
	report)
		echo -i --input --since --until -s --sort --format --limit -n \
			--show-nr-samples --stdio -g --children --no-children \
			--tree --percent-limit --max-stack --comm --pid --tid --file \
			--symbol --cgroup --no-demangle --no-inline --no-process \
			--full-path --resymbolize --debuginfo-dir --write --value \
			--threads
		;;
	diff)
		echo --format --limit
		;;
	cookies)
		echo -i --input --format
		;;
	top)
		echo -a --all-cpus -p -i --no-inherit -g -F --freq --only \
			--backend --delay \
			-s --sort --comm --pid --stdio --iterations --format \
			--limit -o --output --off-cpu --off-cpu-min --value
		;;
	collect)
		echo --kind --backend -p --pid --buffer --format
		;;
	export)
		echo --format -i --input --since --until -o --output --no-comm \
			--value
		;;
	flamegraph)
		echo -i --input --since --until -o --output --format --group \
			--by --diff --value
		;;
	annotate)
		echo -i --input --format --no-demangle --debuginfo-dir -k --vmlinux
		;;
	esac
}

# COMPREPLY from the words $1 that start with $2.
_dcprof_words()
{
	local IFS=$'\n'
	COMPREPLY=($(IFS=$' \t\n' compgen -W "$1" -- "$2"))
}

# COMPREPLY from file names (directories with $1 = -d) that start with $2.
_dcprof_files()
{
	local IFS=$'\n'
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen "$1" -- "$2"))
}

# annotate's SYMBOL: the sampled functions of the profile -i names (else
# dcprof.data), as the binaries spell them (no spaces), most samples first.
_dcprof_symbols()
{
	local input=dcprof.data j
	for ((j = 1; j < COMP_CWORD; j++)); do
		case ${COMP_WORDS[j]} in
		-i | --input) input=${COMP_WORDS[j + 1]} ;;
		esac
	done
	"${COMP_WORDS[0]}" report -i "$input" --sort symbol --no-demangle \
		--limit 500 2>/dev/null |
		sed -n 's/^ *[0-9][0-9]* *[0-9.]*%  \[[.k]\] \([^ []*\)$/\1/p'
}

_dcprof()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd= i

	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	# The command: the first word after dcprof that is not an option.
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*)
			cmd=${COMP_WORDS[i]}
			break
			;;
		esac
	done
	if [ -z "$cmd" ]; then
		case $cur in
		-*) _dcprof_words "--help --version" "$cur" ;;
		*) _dcprof_words "$_dcprof_commands" "$cur" ;;
		esac
		return 0
	fi
	# record/top ... -- COMMAND ARGS: the profiled command's own words.
	for ((i = i + 1; i < COMP_CWORD; i++)); do
		[ "${COMP_WORDS[i]}" = -- ] || continue
		if [ "$i" -eq $((COMP_CWORD - 1)) ]; then
			_dcprof_words "$(compgen -c -- "$cur" | sort -u)" "$cur"
		else
			_dcprof_files -f "$cur"
		fi
		return 0
	done
	# record's -i is --no-inherit, which takes no argument
	[ "$cmd" = record ] && [ "$prev" = -i ] && prev=
	case $prev in
	-i | --input | -o | --output | --only | --push-token-file | \
		--push-basic-auth-file | --push-ca-file | -k | --vmlinux)
		_dcprof_files -f "$cur"
		return 0
		;;
	--continuous)
		_dcprof_files -d "$cur"
		return 0
		;;
	--debuginfo-dir)
		_dcprof_files -d "$cur"
		return 0
		;;
	--format)
		case $cmd in
		export) _dcprof_words "pprof otlp folded" "$cur" ;;
		flamegraph) _dcprof_words "html svg" "$cur" ;;
		*) _dcprof_words "text json" "$cur" ;;
		esac
		return 0
		;;
	--kind)
		_dcprof_words "tasks maps" "$cur"
		return 0
		;;
	--tree)
		_dcprof_words "caller callee" "$cur"
		return 0
		;;
	--call-graph)
		_dcprof_words "fp dwarf" "$cur"
		return 0
		;;
	-e | --event)
		_dcprof_words "cpu-clock task-clock page-faults minor-faults
			major-faults context-switches cpu-migrations cycles
			cpu-clock:u cpu-clock:k" "$cur"
		return 0
		;;
	-u | --uid)
		[ "$cmd" = record ] && _dcprof_words "$(compgen -u)" "$cur"
		return 0
		;;
	-s | --sort)
		# the keys not given yet
		local prefix=${cur%"${cur##*,}"} j k left=
		for k in comm pid tid process file symbol cgroup unit container pod; do
			[[ ",$prefix" == *",$k,"* ]] || left+=" $k"
		done
		_dcprof_words "$left" "${cur##*,}"
		for j in "${!COMPREPLY[@]}"; do
			COMPREPLY[j]=$prefix${COMPREPLY[j]}
		done
		return 0
		;;
	--group)
		_dcprof_words "process thread" "$cur"
		return 0
		;;
	--by)
		_dcprof_words "cgroup unit container pod" "$cur"
		return 0
		;;
	--value)
		_dcprof_words "cpu off-cpu wall" "$cur"
		return 0
		;;
	--backend)
		_dcprof_words "bpf perf auto" "$cur"
		return 0
		;;
	-p | --pid)
		_dcprof_words "$(cd /proc 2>/dev/null && compgen -G '[0-9]*')" "$cur"
		return 0
		;;
	-F | --freq | --duration | --flush-interval | --mmap-pages | --ready-fd | --limit | \
		--off-cpu-min | --unwind-memory | --memory-limit | --max-open-files | \
		--percent-limit | --max-stack | --buffer | --comm | --file | \
		--symbol | --period | --keep | --keep-size | --push | --push-app | \
		--push-label | --push-spool-size | --since | --until)
		return 0
		;;
	esac
	case $cur in
	-*) _dcprof_words "$(_dcprof_options "$cmd") --help" "$cur" ;;
	*)
		if [ "$cmd" = annotate ]; then
			_dcprof_words "$(_dcprof_symbols)" "$cur"
		else
			# profiles (flamegraph --diff)
			_dcprof_files -f "$cur"
		fi
		;;
	esac
	return 0
}

complete -F _dcprof dcprof
