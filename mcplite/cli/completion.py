"""``completion bash|zsh|fish``: a shell completion script, written from the argument parser itself.

The script completes the commands, each command's options and fixed choices (``list tools``), the values of
options that have choices (``--protocol-version``), and file names for the options that take a path; after
``--`` (the server's command line) it leaves completion to files. Nothing is imported to write it: the words
come from `build_parser`, so a new option is completed without touching this file.
"""

import argparse
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

#: The options whose value is a file or a directory: completed as paths.
PATH_OPTIONS = ("--config", "--save", "--cwd", "--root")
#: The name the scripts complete (the console script). ``python -m mcplite`` is not a command a shell completes.
COMMAND_NAME = "mcplite"


@dataclass
class _Words:
    """What the parser accepts, as the scripts need it."""

    options: List[Tuple[str, str]] = field(default_factory=list)  # (option, help)
    takes_value: List[str] = field(default_factory=list)  # options whose next word is their value
    choices: Dict[str, List[str]] = field(default_factory=dict)  # option -> its values
    commands: List[Tuple[str, str]] = field(default_factory=list)  # (command, help)
    command_options: Dict[str, List[str]] = field(default_factory=dict)
    command_choices: Dict[str, List[str]] = field(default_factory=dict)  # the fixed words of a command's positionals


def _words(parser: argparse.ArgumentParser) -> _Words:
    words = _Words()
    for action in parser._actions:  # pyright: ignore[reportPrivateUsage]  # argparse has no public walk
        if isinstance(action, argparse._SubParsersAction):  # pyright: ignore[reportPrivateUsage]
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}  # pyright: ignore
            for name, sub in action.choices.items():
                words.commands.append((name, helps.get(name, "")))
                words.command_options[name] = [option for sub_action in sub._actions  # pyright: ignore
                                               for option in sub_action.option_strings]
                words.command_choices[name] = [str(choice) for sub_action in sub._actions  # pyright: ignore
                                               if not sub_action.option_strings and sub_action.choices
                                               for choice in sub_action.choices]
            continue
        for option in action.option_strings:
            words.options.append((option, "" if action.help in (None, argparse.SUPPRESS) else str(action.help)))
            if action.nargs != 0:
                words.takes_value.append(option)
            if action.choices:
                words.choices[option] = [str(choice) for choice in action.choices]
    return words


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for ``shell`` (bash, zsh or fish) of the command line ``parser`` reads."""
    words = _words(parser)
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](words)


def _bash_case(words: _Words, indent: str) -> List[str]:
    """The ``case`` arms shared by bash and zsh: the values of an option, and each command's words."""
    lines = []
    for option, values in words.choices.items():
        lines.append(f"{indent}{option}) _mcplite_offer '{' '.join(values)}'; return 0;;")
    lines.append(f"{indent}{'|'.join(PATH_OPTIONS)}) _mcplite_files; return 0;;")
    return lines


def _bash(words: _Words) -> str:
    value_options = "|".join(words.takes_value)
    commands = " ".join(name for name, _ in words.commands)
    options = " ".join(option for option, _ in words.options)
    per_command = "\n".join(
        f"        {name}) _mcplite_offer '{' '.join(words.command_choices[name])}' "
        f"'{' '.join(words.command_options[name])}';;" for name, _ in words.commands)
    return f"""# bash completion for {COMMAND_NAME} (written by `{COMMAND_NAME} completion bash`)
_mcplite_offer() {{  # $1: words to offer, $2: options (offered when the word starts with -)
    local cur=${{COMP_WORDS[COMP_CWORD]}}
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$2" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$1" -- "$cur"))
    fi
}}
_mcplite_files() {{
    COMPREPLY=($(compgen -f -- "${{COMP_WORDS[COMP_CWORD]}}"))
}}
_mcplite() {{
    local cmd="" i word prev=${{COMP_WORDS[COMP_CWORD-1]}}
    COMPREPLY=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${{COMP_WORDS[i]}}
        if [[ $word == -- ]]; then  # the server's command line
            _mcplite_files
            return 0
        fi
        if [[ -z $cmd ]]; then
            case $word in
                {value_options}) ((i += 1));;
                -*) ;;
                *) cmd=$word;;
            esac
        fi
    done
    case $prev in
{chr(10).join(_bash_case(words, "        "))}
    esac
    if [[ -z $cmd ]]; then
        _mcplite_offer '{commands}' '{options}'
        return 0
    fi
    case $cmd in
{per_command}
    esac
    return 0
}}
complete -o default -F _mcplite {COMMAND_NAME}
"""


def _quoted(text: str) -> str:
    """``text`` in single quotes, for sh, zsh and fish alike."""
    return "'" + text.replace("\\", "\\\\").replace("'", "'\\''") + "'"


def _described(text: str) -> str:
    """A help text cut to its first clause, for a one-line description beside a completion."""
    return text.split(";")[0].split(" (")[0].strip()


def _zsh(words: _Words) -> str:
    value_options = "|".join(words.takes_value)
    described = " ".join(_quoted(f"{name}:{_described(help)}".replace("\\", "")) for name, help in words.commands)
    options = " ".join(option for option, _ in words.options)
    per_command = "\n".join(
        f"        ({name}) _mcplite_offer '{' '.join(words.command_choices[name])}' "
        f"'{' '.join(words.command_options[name])}';;" for name, _ in words.commands)
    cases = "\n".join("        (" + line.strip() for line in _bash_case(words, ""))
    return f"""#compdef {COMMAND_NAME}
# zsh completion for {COMMAND_NAME} (written by `{COMMAND_NAME} completion zsh`): put it in a folder of $fpath as
# _{COMMAND_NAME}, or source it after compinit.
_mcplite_offer() {{  # $1: words to offer, $2: options (offered when the word starts with -)
    if [[ $PREFIX == -* ]]; then
        compadd -- ${{=2}}
    else
        compadd -- ${{=1}}
    fi
}}
_mcplite_files() {{
    _files
}}
_mcplite() {{
    local cmd="" i word
    local -a commands
    commands=({described})
    for ((i = 2; i < CURRENT; i++)); do
        word=${{words[i]}}
        if [[ $word == -- ]]; then  # the server's command line
            _files
            return
        fi
        if [[ -z $cmd ]]; then
            case $word in
                ({value_options}) ((i += 1));;
                (-*) ;;
                (*) cmd=$word;;
            esac
        fi
    done
    case ${{words[CURRENT-1]}} in
{cases}
    esac
    if [[ -z $cmd ]]; then
        if [[ $PREFIX == -* ]]; then
            compadd -- {options}
        else
            _describe command commands
        fi
        return
    fi
    case $cmd in
{per_command}
    esac
}}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _mcplite "$@"
else
    compdef _mcplite {COMMAND_NAME}
fi
"""


def _fish(words: _Words) -> str:
    lines = [f"# fish completion for {COMMAND_NAME} (written by `{COMMAND_NAME} completion fish`)",
             f"complete -c {COMMAND_NAME} -f"]
    for option, help in words.options:
        flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
        line = f"complete -c {COMMAND_NAME} -n __fish_use_subcommand {flag}"
        if option in words.choices:
            line += f" -x -a {_quoted(' '.join(words.choices[option]))}"
        elif option in PATH_OPTIONS:
            line += " -r -F"
        elif option in words.takes_value:
            line += " -x"
        lines.append(line + (f" -d {_quoted(_described(help))}" if help else ""))
    for name, help in words.commands:
        lines.append(f"complete -c {COMMAND_NAME} -n __fish_use_subcommand -a {name} -d {_quoted(_described(help))}")
        seen = f"-n '__fish_seen_subcommand_from {name}'"
        if words.command_choices[name]:
            lines.append(f"complete -c {COMMAND_NAME} {seen} -a {_quoted(' '.join(words.command_choices[name]))}")
        for option in words.command_options[name]:
            if option.startswith("--"):
                lines.append(f"complete -c {COMMAND_NAME} {seen} -l {option[2:]}")
    return "\n".join(lines) + "\n"
