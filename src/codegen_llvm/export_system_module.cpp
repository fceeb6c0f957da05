// export_system_module: TVM's "system module" for deployments that may not load code at
// run time: several kernels in one object with a table the program searches by name.
#include <fmt/format.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cctype>

#include "codegen_llvm/compiler.h"
#include "codegen_llvm/internal_compile.h"
#include "codegen_llvm/llvm_compat.h"
#include "te/build.h"

namespace te {
namespace {

// A private constant C string, as an i8 pointer.
llvm::Constant* c_string(llvm::Module& m, const std::string& text, const std::string& name) {
  llvm::Constant* data = llvm::ConstantDataArray::getString(m.getContext(), text);
  auto* global =
      new llvm::GlobalVariable(m, data->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage, data, name);
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return llvm::ConstantExpr::getPointerCast(global, codegen::compat::pointer_to(llvm::Type::getInt8Ty(m.getContext())));
}

// `const te_kernel <module>_kernels[]`: {name, function, prototype} per kernel, then a
// null entry.
void add_registry(llvm::Module& m, const codegen::CompileInput& in, const std::string& module) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::PointerType* i8p = codegen::compat::pointer_to(llvm::Type::getInt8Ty(ctx));
  llvm::StructType* entry = llvm::StructType::get(ctx, {i8p, i8p, i8p});
  std::vector<llvm::Constant*> rows;
  for (size_t k = 0; k < in.funcs.size(); ++k) {
    llvm::Function* fn = m.getFunction(in.funcs[k].name);
    TE_ICHECK(fn != nullptr, "system module: no function " + in.funcs[k].name);
    rows.push_back(llvm::ConstantStruct::get(
        entry, {c_string(m, in.funcs[k].name, ".te_name"), llvm::ConstantExpr::getPointerCast(fn, i8p),
                c_string(m, codegen::c_prototype(in.sigs[k]), ".te_prototype")}));
  }
  llvm::Constant* null = llvm::ConstantPointerNull::get(i8p);
  rows.push_back(llvm::ConstantStruct::get(entry, {null, null, null}));
  llvm::ArrayType* type = llvm::ArrayType::get(entry, rows.size());
  new llvm::GlobalVariable(m, type, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(type, rows), module + "_kernels");
}

std::string registry_header(const std::vector<LoweredFunc>& funcs, const std::string& module) {
  std::string guard = "TE_SYSTEM_MODULE_" + module + "_H_";
  for (char& c : guard) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string text = c_header(funcs, guard + "KERNELS_");
  text += fmt::format(
      "\n/* The system module {0}: its kernels by name (export_system_module). */\n"
      "#ifndef {1}\n#define {1}\n\n#include <stddef.h>\n#include <string.h>\n\n"
      "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n"
      "#ifndef TE_KERNEL_ENTRY_DEFINED\n#define TE_KERNEL_ENTRY_DEFINED\n"
      "/* One kernel: its name, its C function (cast it to the prototype's type) and the\n"
      " * prototype as text. */\n"
      "typedef struct te_kernel_entry {{\n  const char* name;\n  void* function;\n"
      "  const char* prototype;\n}} te_kernel_entry;\n#endif\n\n"
      "/* Every kernel of {0}, then an entry whose name is NULL. */\n"
      "extern const te_kernel_entry {0}_kernels[];\n\n"
      "/* The kernel called name, or NULL. */\n"
      "static inline const te_kernel_entry* {0}_lookup(const char* name) {{\n"
      "  const te_kernel_entry* k = {0}_kernels;\n"
      "  for (; k->name != NULL; ++k)\n    if (strcmp(k->name, name) == 0) return k;\n"
      "  return NULL;\n}}\n\n"
      "#ifdef __cplusplus\n}}  /* extern \"C\" */\n#endif\n\n#endif\n",
      module, guard);
  return text;
}

}  // namespace

void export_system_module(const std::vector<LoweredFunc>& funcs, const std::string& module_name,
                          const std::string& object_path, const std::string& header_path, const BuildOptions& options) {
  if (!codegen::is_c_name(module_name))
    throw Error(fmt::format("export_system_module: the module name '{}' must be a C identifier", module_name));
  if (funcs.empty()) throw Error("export_system_module: no functions given");
  codegen::CompileInput in = codegen::compile_input(funcs, options);
  // The table and the header's names must not collide with a kernel's.
  for (const LoweredFunc& f : in.funcs)
    if (f.name == module_name || f.name == module_name + "_kernels" || f.name == module_name + "_lookup")
      throw Error(
          fmt::format("export_system_module: the module '{}' has the name of one of its "
                      "functions ('{}')",
                      module_name, f.name));
  std::string object = codegen::compile_object(in, [&](llvm::Module& m) { add_registry(m, in, module_name); });
  codegen::write_file(object_path, object, "export_system_module");
  codegen::write_file(header_path, registry_header(in.funcs, module_name), "export_system_module");
}

}  // namespace te
