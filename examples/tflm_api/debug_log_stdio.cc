// DebugLog for a hosted build (TFLM's porting contract: each port provides one).
#include <stdio.h>

extern "C" void DebugLog(const char *s) { fputs(s, stdout); }
