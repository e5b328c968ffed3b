// Placeholder translation unit until the runner lands (keeps the library non-empty).
namespace gpudm::experiments {}
