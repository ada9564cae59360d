#!/usr/bin/env bash
# Language data the NLP features need (WordNet for NLTK, ...), installed from system packages
# into .venv. Each feature adds its step here. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

# --- WordNet for NLTK (builders/generate/antonyms.py) -------------------------------------
# Debian's wordnet-base ships the WordNet 3.0 dict files in /usr/share/wordnet. NLTK reads them
# from <nltk_data>/corpora/wordnet/ and refuses symlinked files, so they are copied. The Debian
# package lacks `lexnames` (the lexicographer file names NLTK needs), so it is written here:
# the 45 standard WordNet 3.0 lexicographer files, numbered 00-44, with their syntactic category
# (1 noun, 2 verb, 3 adjective, 4 adverb). builders/generate/antonyms.py adds
# .venv/nltk_data to nltk.data.path (NLTK_DATA also works).
WN_SRC=/usr/share/wordnet
WN_DST=${NLTK_DATA_DIR:-.venv/nltk_data}/corpora/wordnet
if [ ! -f "$WN_SRC/data.adj" ]; then
  echo "data-deps: $WN_SRC/data.adj missing: run scripts/system-deps.sh (wordnet-base)" >&2
  exit 1
fi
mkdir -p "$WN_DST"
for f in "$WN_SRC"/*; do
  cp -L --remove-destination "$f" "$WN_DST/$(basename "$f")"
done
i=0
: > "$WN_DST/lexnames.tmp"
for entry in adj.all:3 adj.pert:3 adv.all:4 noun.Tops:1 noun.act:1 noun.animal:1 \
    noun.artifact:1 noun.attribute:1 noun.body:1 noun.cognition:1 noun.communication:1 \
    noun.event:1 noun.feeling:1 noun.food:1 noun.group:1 noun.location:1 noun.motive:1 \
    noun.object:1 noun.person:1 noun.phenomenon:1 noun.plant:1 noun.possession:1 \
    noun.process:1 noun.quantity:1 noun.relation:1 noun.shape:1 noun.state:1 \
    noun.substance:1 noun.time:1 verb.body:2 verb.change:2 verb.cognition:2 \
    verb.communication:2 verb.competition:2 verb.consumption:2 verb.contact:2 \
    verb.creation:2 verb.emotion:2 verb.motion:2 verb.perception:2 verb.possession:2 \
    verb.social:2 verb.stative:2 verb.weather:2 adj.ppl:3; do
  printf '%02d\t%s\t%s\n' "$i" "${entry%%:*}" "${entry##*:}" >> "$WN_DST/lexnames.tmp"
  i=$((i + 1))
done
mv "$WN_DST/lexnames.tmp" "$WN_DST/lexnames"
echo "data-deps: WordNet copied to $WN_DST ($(ls "$WN_DST" | wc -l) files)"
