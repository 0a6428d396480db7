// libiorelay.so is the client archive linked whole; this file only gives the target a source.
#include "iorelay/iorelay.h"
