#!/usr/bin/env bash
# Writes the stallsim(1) man page from the program's own tables: the command
# table (stallsim --help), each command's option table (stallsim help CMD),
# the key schema (stallsim help keys), the kind registry (help kinds) and
# the published GPU rates (help gpus).
# The build runs it; nothing in the page is written by hand twice.
#   scripts/gen-man.sh STALLSIM OUT.1
set -euo pipefail
bin=$1
out=$2
version=$("$bin" --version | awk '{print $2}')
# roff: a leading dot or quote starts a request; backslashes escape.
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
{
  echo ".TH STALLSIM 1 \"\" \"stallsim $version\" \"User Commands\""
  echo ".SH NAME"
  echo "stallsim \\- predict data stalls in DNN training"
  echo ".SH SYNOPSIS"
  echo ".B stallsim"
  echo "COMMAND [options]"
  echo ".SH DESCRIPTION"
  echo "stallsim predicts the time GPUs wait for input data to be fetched and"
  echo "pre-processed, by a discrete-event simulation of every item of every epoch"
  echo "with a closed-form analytical model beside it, from rates measured on a real"
  echo "host (stallsim calibrate)."
  echo ".PP"
  echo ".nf"
  "$bin" --help | esc
  echo ".fi"
  echo ".SH COMMANDS"
  for c in run check sweep advise calibrate measure init import; do
    echo ".SS $c"
    echo ".nf"
    "$bin" help "$c" | esc
    echo ".fi"
  done
  echo ".SH SCENARIO KEYS"
  echo ".nf"
  "$bin" help keys | esc
  echo ".fi"
  echo ".SH GPU RATES"
  echo ".nf"
  "$bin" help gpus | esc
  echo ".fi"
  echo ".SH KINDS"
  echo ".nf"
  "$bin" help kinds | esc
  echo ".fi"
  echo ".SH EXIT STATUS"
  echo "0 success, 1 runtime failure, 2 bad usage or bad input."
  echo ".SH FILES"
  echo "The shipped scenarios and host-profile notes are under share/stallsim"
  echo "of the installation prefix (/usr/share/stallsim from the .deb)."
} >"$out"
