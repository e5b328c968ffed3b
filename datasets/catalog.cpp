// Placeholder translation unit until the catalog lands (keeps the library non-empty).
namespace gpudm::datasets {}
