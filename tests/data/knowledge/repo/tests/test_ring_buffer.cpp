#include <cassert>

#include "station/ring_buffer.h"

int main() {
  tidepool::RingBuffer<int, 3> buffer;
  buffer.push(1);
  buffer.push(2);
  buffer.push(3);
  buffer.push(4);  // overwrites 1
  assert(buffer.full());
  assert(*buffer.pop() == 2);
  assert(*buffer.pop() == 3);
  assert(*buffer.pop() == 4);
  assert(!buffer.pop());
  return 0;
}
