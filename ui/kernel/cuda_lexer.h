// C++ highlighting that also knows CUDA: QScintilla's C++ lexer with the CUDA qualifiers, types,
// built-in variables and intrinsics a convolution kernel uses added to its keyword sets, so
// __global__ reads as a keyword and threadIdx as a built-in rather than as plain names.
#pragma once

#include <Qsci/qscilexercpp.h>

namespace convscope::ui {

class CudaLexer : public QsciLexerCPP {
  Q_OBJECT

 public:
  explicit CudaLexer(QObject* parent = nullptr);

  // Set 1: C++'s keywords and CUDA's qualifiers and types. Set 2 (drawn as KeywordSet2): CUDA's
  // built-in variables and functions. Other sets as the C++ lexer has them.
  const char* keywords(int set) const override;
};

}  // namespace convscope::ui
