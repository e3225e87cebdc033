# shellcheck shell=bash
# Private apt state: read suites the system does not list (bookworm-backports,
# trixie, trixie-backports) without ever changing /etc/apt. Sourced by the
# bootstrap and fetch scripts.

# shellcheck disable=SC2034 # used by the scripts that source this file
DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# The archive URI this machine already uses for Debian, read from the
# system's own apt configuration (deb822 or one-line format).
debian_mirror() {
	local uri
	# shellcheck disable=SC2016 # apt's own format string, not shell
	uri=$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null |
		grep -v -e security -e '^$' | grep -m1 -i debian || true)
	if [ -z "$uri" ]; then
		uri=$(grep -hs -m1 -E '^URIs:' /etc/apt/sources.list.d/*.sources |
			awk '{print $2}' | grep -v security | head -n1 || true)
	fi
	if [ -z "$uri" ]; then
		uri=$(grep -hs -E '^deb ' /etc/apt/sources.list |
			grep -v security | awk '{for(i=2;i<=NF;i++) if ($i ~ /:\/\//) {print $i; exit}}' |
			head -n1 || true)
	fi
	if [ -z "$uri" ]; then
		echo "devmemsim: cannot find a Debian archive URI in /etc/apt" >&2
		return 1
	fi
	echo "${uri%/}/"
}

# private_apt DIR LINE... : set up DIR as a private apt state whose sources
# are LINE..., run 'apt-get update' in it, and define PAPT (an array: the
# apt-get command line that uses it).
private_apt() {
	local dir=$1
	shift
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/parts" "$dir/prefs"
	printf '%s\n' "$@" >"$dir/sources.list"
	PAPT=(apt-get -q -o APT::Sandbox::User=root
		-o Dir::Etc::SourceList="$dir/sources.list"
		-o Dir::Etc::SourceParts="$dir/parts"
		-o Dir::State::Lists="$dir/lists"
		-o Dir::Cache="$dir/cache"
		-o Dir::Etc::Preferences=/dev/null
		-o Dir::Etc::PreferencesParts="$dir/prefs")
	"${PAPT[@]}" -qq update
}
