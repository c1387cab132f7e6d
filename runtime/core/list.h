// An intrusive doubly-linked list: the queues of the fast path (posted and unexpected
// receives, pending sends) link their elements through an embedded ListHook, so pushing and
// removing never allocate.
#pragma once

#include <cstddef>

namespace rrt::core {

struct ListHook {
  ListHook* prev = nullptr;
  ListHook* next = nullptr;
  bool linked() const { return next != nullptr; }
};

// T embeds a ListHook at member Hook.
template <typename T, ListHook T::*Hook>
class List {
 public:
  List() { head_.prev = head_.next = &head_; }
  List(const List&) = delete;
  List& operator=(const List&) = delete;

  bool empty() const { return head_.next == &head_; }
  size_t size() const { return size_; }
  T* front() const { return empty() ? nullptr : owner(head_.next); }
  T* back() const { return empty() ? nullptr : owner(head_.prev); }
  // The element after t, or nullptr at the end.
  T* next(T* t) const {
    ListHook* n = (t->*Hook).next;
    return n == &head_ ? nullptr : owner(n);
  }

  void pushBack(T* t) { insertBefore(&head_, &(t->*Hook)); }
  void pushFront(T* t) { insertBefore(head_.next, &(t->*Hook)); }
  void remove(T* t) {
    ListHook* h = &(t->*Hook);
    h->prev->next = h->next;
    h->next->prev = h->prev;
    h->prev = h->next = nullptr;
    --size_;
  }
  T* popFront() {
    T* t = front();
    if (t) remove(t);
    return t;
  }

 private:
  static T* owner(ListHook* h) {
    // offsetof on a member pointer: the address of the hook in a null-based object.
    const size_t off = reinterpret_cast<size_t>(&(static_cast<T*>(nullptr)->*Hook));
    return reinterpret_cast<T*>(reinterpret_cast<char*>(h) - off);
  }
  void insertBefore(ListHook* pos, ListHook* h) {
    h->next = pos;
    h->prev = pos->prev;
    pos->prev->next = h;
    pos->prev = h;
    ++size_;
  }

  ListHook head_;
  size_t size_ = 0;
};

}  // namespace rrt::core
