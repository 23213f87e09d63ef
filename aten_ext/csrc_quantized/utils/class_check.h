// Packed-parameter arguments checked before unboxing.
//
// An op whose schema takes a packed-params object (conv2d's Conv2dPackedParamsBase, linear's
// LinearPackedParamsBase, ...) unboxes it with IValue::toCustomClass, which throws torch's
// "Tried to convert an IValue of type __torch__...Conv3dPackedParamsBase to custom class type
// ...Conv2dPackedParamsBase" without naming the op when a caller passes another family's
// object. with_class_check registers the same unboxed kernel behind a boxed wrapper that checks
// the class of those arguments first:
//   qplugin::conv2d: packed_weight should be a Conv2dPackedParamsBase (from qplugin::conv2d_prepack),
//   got Conv3dPackedParamsBase
// Every Python and TorchScript call is boxed already, so the wrapper costs one type comparison.
#pragma once

#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include <string>

namespace qplugin {
namespace detail {

// "__torch__.torch.classes.qplugin.Conv2dPackedParamsBase" -> "Conv2dPackedParamsBase"
inline std::string short_name(const std::string& s) {
  const auto dot = s.rfind('.');
  return dot == std::string::npos ? s : s.substr(dot + 1);
}

template <class ClassT>
void check_class_arg(const c10::OperatorHandle& op, size_t idx, const torch::jit::Stack& stack) {
  const auto& args = op.schema().arguments();
  const c10::IValue& v = stack[stack.size() - args.size() + idx];
  static const c10::ClassTypePtr want = c10::getCustomClassType<c10::intrusive_ptr<ClassT>>();
  if (v.isObject() && v.type()->str() == want->str()) return;
  TORCH_CHECK_TYPE(false, op.schema().name(), ": ", args[idx].name(), " should be a ", short_name(want->str()),
                   " (made by the matching qplugin prepack op), got ",
                   v.isNone() ? std::string("None") : short_name(v.type()->str()));
}

template <class ClassT, class FnPtr, size_t... kIdx>
void boxed_with_class_check(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  (check_class_arg<ClassT>(op, kIdx, *stack), ...);
  static const c10::KernelFunction kernel = c10::KernelFunction::makeFromUnboxedFunction(FnPtr());
  kernel.callBoxed(op, ks, stack);
}

}  // namespace detail

// fn (TORCH_FN(f)) as a kernel whose arguments kIdx... are checked to be ClassT objects first.
template <class ClassT, size_t... kIdx, class FnPtr>
torch::CppFunction with_class_check(FnPtr) {
  return torch::CppFunction::makeFromBoxedFunction<&detail::boxed_with_class_check<ClassT, FnPtr, kIdx...>>();
}

}  // namespace qplugin

namespace qplugin {

// A packed-params class's __setstate__ takes its state as Any (def_pickle allows a supertype of
// __getstate__'s type) and converts it here, so that a state of the wrong type, from a tampered or
// foreign file, names the class and both types instead of torch's generic
// "__setstate__() Expected a value of type ...".
template <class State>
State typed_state(const c10::IValue& v, const char* cls) {
  try {
    return v.to<State>();
  } catch (const c10::Error&) {
    TORCH_CHECK_TYPE(false, "qplugin::", cls, ".__setstate__: state should be of type ",
                     c10::getTypePtr<State>()->repr_str(), ", got ", v.type()->repr_str());
  }
}

}  // namespace qplugin
