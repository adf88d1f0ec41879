// Splits a string into words as a POSIX shell does, for --mpi-args and
// --binding-args: blanks separate words; single quotes keep everything
// literally; double quotes keep blanks, with backslash escaping only $ ` "
// \ and newline inside them; a backslash outside quotes keeps the next
// character. Nothing is expanded ($VAR, globs, ~ stay as written): the
// words go to mpirun as they are, never through a shell.
#pragma once

#include <string>
#include <vector>

namespace kolo::runner {

// Throws InvalidArgument naming `what` for an unterminated quote or a
// trailing backslash: "--mpi-args: unterminated ' quote in ...".
std::vector<std::string> split_shell_words(const std::string& text, const std::string& what);

// The words as one line a shell splits back into them (for --verbose):
// words with blanks or shell characters in single quotes.
std::string shell_quoted(const std::vector<std::string>& words);

}  // namespace kolo::runner
